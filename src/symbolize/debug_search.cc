#include "symbolize/debug_search.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <optional>
#include <vector>

#include "symbolize/elf_file.h"

namespace memloupe::symbolize {
namespace {

// Whether `path` is a file elfutils would open as a debug file: there and not
// `main` itself, or not looked at (its open would fail otherwise than "not
// there", which ends elfutils' search without an answer: yes).
bool may_open(const std::string& path, const struct stat& main) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return errno != ENOENT && errno != ENOTDIR;
  return st.st_ino != main.st_ino || st.st_dev != main.st_dev;
}

// The names elfutils' find_debuginfo_in_path (elfutils 0.188,
// libdwfl/find-debuginfo.c) tries for `file`, in the order it tries them.
std::vector<std::string> debuglink_candidates(const std::string& file, const char* debuglink) {
  const size_t slash = file.rfind('/');
  const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  const std::optional<std::string> dir =
      slash == std::string::npos ? std::nullopt : std::optional<std::string>(file.substr(0, slash));
  const std::string link = debuglink != nullptr ? debuglink : base + ".debug";
  const auto in = [&](const std::optional<std::string>& d, const std::string& name) {
    return d ? *d + "/" + name : name;
  };
  std::vector<std::string> names;
  names.push_back(in(dir, link));  // "": the file's directory
  const auto add = [&](const std::string& place) {
    names.push_back(place + "/" + link);
    if (debuglink == nullptr) names.push_back(place + "/" + base);
  };
  add(in(dir, ".debug"));  // ".debug": its subdirectory
  // "/usr/lib/debug": each tail of the file's absolute directory under it.
  if (dir && !dir->empty() && (*dir)[0] == '/') {
    for (size_t from = 1;;) {
      if (from < dir->size()) add(std::string(kSystemDebugRoot) + "/" + dir->substr(from));
      const size_t next = dir->find('/', from);
      if (next == std::string::npos) break;
      from = next + 1;
    }
    add(kSystemDebugRoot);
  }
  return names;
}

}  // namespace

std::string debug_file_path(const std::string& root, std::span<const uint8_t> build_id) {
  const std::string id = hex(build_id);
  return root + "/.build-id/" + id.substr(0, 2) + "/" + id.substr(2) + ".debug";
}

bool debuginfod_configured() {
  const char* urls = std::getenv("DEBUGINFOD_URLS");
  return urls != nullptr && urls[0] != '\0';
}

bool local_debug_file_may_exist(const std::string& file, std::span<const uint8_t> build_id, const char* debuglink) {
  struct stat main {};
  if (stat(file.c_str(), &main) != 0) main.st_dev = main.st_ino = 0;  // (as elfutils)
  if (!build_id.empty() && may_open(debug_file_path(kSystemDebugRoot, build_id), main)) return true;
  std::vector<std::string> names = {file};
  if (char* real = realpath(file.c_str(), nullptr)) {
    if (file != real) names.emplace_back(real);
    std::free(real);
  }
  for (const std::string& name : names) {
    for (const std::string& candidate : debuglink_candidates(name, debuglink)) {
      if (may_open(candidate, main)) return true;
    }
  }
  return false;
}

}  // namespace memloupe::symbolize
