#include "replay/allocators.h"

#include <unistd.h>

#include <filesystem>

namespace memloupe::replay {
namespace {

struct Known {
  const char* name;
  const char* soname;   // nullptr: glibc, the process's own
  const char* package;  // Debian's
};
constexpr Known kKnown[] = {
    {"glibc", nullptr, "libc6"},
    {"jemalloc", "libjemalloc.so.2", "libjemalloc2"},
    {"tcmalloc", "libtcmalloc_minimal.so.4", "libtcmalloc-minimal4"},
    {"mimalloc", "libmimalloc.so.2", "libmimalloc2.0"},
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t end = s.find(sep, start);
    std::string item = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (!item.empty()) out.push_back(std::move(item));
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

Allocator known(const Known& k) {
  Allocator a{k.name, "", ""};
  if (k.soname == nullptr) return a;
  a.library = find_library(k.soname);
  if (a.library.empty())
    a.missing = std::string(k.soname) + " not found; install the Debian package " + k.package;
  return a;
}

}  // namespace

std::string find_library(const std::string& soname) {
  // The multiarch directories first (Debian's packages install there).
  std::vector<std::string> dirs;
#ifdef MEMLOUPE_MULTIARCH
  dirs.push_back(std::string("/usr/lib/") + MEMLOUPE_MULTIARCH);
  dirs.push_back(std::string("/lib/") + MEMLOUPE_MULTIARCH);
#endif
  for (const char* d : {"/usr/lib64", "/usr/lib", "/usr/local/lib"}) dirs.emplace_back(d);
  for (const std::string& d : dirs) {
    const std::string path = d + "/" + soname;
    if (::access(path.c_str(), R_OK) == 0) return path;
  }
  return "";
}

Expected<std::vector<Allocator>> choose_allocators(const std::string& names, const std::vector<std::string>& extra) {
  std::vector<Allocator> out;
  for (const std::string& n : split(names, ',')) {
    const Known* k = nullptr;
    for (const Known& c : kKnown)
      if (n == c.name) k = &c;
    if (k == nullptr)
      return Error{"--allocators: unknown allocator '" + n + "' (known: " + kDefaultAllocators +
                   "; others with --allocator NAME=PATH.so)"};
    out.push_back(known(*k));
  }
  for (const std::string& item : extra) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      return Error{"--allocator " + item + ": expected NAME=PATH.so"};
    Allocator a{item.substr(0, eq), std::filesystem::absolute(item.substr(eq + 1)).lexically_normal().string(), ""};
    if (a.library.find_first_of(": ") != std::string::npos)
      return Error{"--allocator " + item + ": LD_PRELOAD cannot take a path with ':' or ' '"};
    if (::access(a.library.c_str(), R_OK) != 0) a.missing = a.library + " not found";
    bool replaced = false;
    for (Allocator& o : out) {
      if (o.name == a.name) {
        o = a;
        replaced = true;
      }
    }
    if (!replaced) out.push_back(a);
  }
  if (out.empty()) return Error{"no allocator to replay against"};
  return out;
}

}  // namespace memloupe::replay
