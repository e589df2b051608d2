#include "cli/run_output.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <memory>

namespace memloupe::cli {
namespace {

constexpr std::string_view kPid = "%p";

std::string absolute(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  return ec ? path : p.lexically_normal().string();
}

std::string dirname_of(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}
std::string basename_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// Whether a live process's recorder is writing `path`: it holds the file under
// flock(LOCK_EX) while it does (recorder/trace_output.h, claim()). The lock is
// taken and given back at once when free.
bool being_written(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool busy = flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  close(fd);
  return busy;
}

}  // namespace

Expected<OutputPlan> plan_output(const std::string& output, const std::string& program,
                                 bool follow_fork) {
  OutputPlan plan;
  if (output.empty()) {
    plan.pattern = absolute("memloupe." + basename_of(program) + ".%p.trace");
    return plan;
  }
  const std::string path = absolute(output);
  if (basename_of(path).empty()) return Error{"-o " + output + ": not a file name"};
  if (dirname_of(path).find(kPid) != std::string::npos) {
    return Error{"-o " + output + ": %p may only appear in the file name"};
  }
  if (path.find(kPid) != std::string::npos) {
    plan.pattern = path;
  } else if (follow_fork) {
    plan.pattern = path + ".%p";
    plan.fixed_output = path;
  } else {
    plan.pattern = path;
    plan.fixed_output = path;
  }
  // Its program would run untraced, and its trace, finalised, would replace the file under the writer.
  if (plan.fixed_output && being_written(*plan.fixed_output)) {
    return Error{"-o " + output + ": a traced process that is still running writes this file (another "
                 "`memloupe run`?); give another -o"};
  }
  return plan;
}

std::string expand(const std::string& pattern, pid_t pid) {
  std::string out = pattern;
  for (size_t at = out.find(kPid); at != std::string::npos; at = out.find(kPid, at)) {
    const std::string id = std::to_string(pid);
    out.replace(at, kPid.size(), id);
    at += id.size();
  }
  return out;
}

TraceFiles::TraceFiles(std::string pattern) : pattern_(std::move(pattern)) {
  for (const std::string& path : matching()) {
    if (auto s = stamp(path)) before_[path] = *s;
  }
}

std::optional<TraceFiles::Stamp> TraceFiles::stamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return Stamp{st.st_ino, st.st_mtim.tv_sec * 1'000'000'000LL + st.st_mtim.tv_nsec,
               static_cast<uint64_t>(st.st_size)};
}

bool TraceFiles::written(const std::string& path) const {
  const auto now = stamp(path);
  if (!now) return false;
  auto it = before_.find(path);
  return it == before_.end() || !(it->second == *now);
}

namespace {

bool all_digits(std::string_view s) {
  return !s.empty() && std::ranges::all_of(s, [](char c) { return c >= '0' && c <= '9'; });
}

// "NAME" or "NAME.N": with --follow-fork, an image exec'd by a traced process
// keeps its pid, and the recorder writes its trace next to the previous one
// as NAME.1, NAME.2, ...
bool matches(std::string_view file, std::string_view prefix, std::string_view suffix) {
  if (!file.starts_with(prefix)) return false;
  file.remove_prefix(prefix.size());
  if (const size_t dot = file.rfind('.'); dot != std::string_view::npos &&
                                          all_digits(file.substr(dot + 1)) &&
                                          file.substr(0, dot).ends_with(suffix)) {
    if (all_digits(file.substr(0, dot - suffix.size()))) return true;
  }
  return file.ends_with(suffix) && all_digits(file.substr(0, file.size() - suffix.size()));
}

}  // namespace

// Files in the pattern's directory whose names are the pattern with a decimal
// number for %p, possibly followed by ".N". A pattern without %p matches
// itself and itself.N.
std::vector<std::string> TraceFiles::matching() const {
  std::vector<std::string> out;
  const std::string dir = dirname_of(pattern_);
  const std::string name = basename_of(pattern_);
  const size_t at = name.find(kPid);
  const std::string prefix = at == std::string::npos ? name : name.substr(0, at);
  const std::string suffix = at == std::string::npos ? "" : name.substr(at + kPid.size());
  std::unique_ptr<DIR, int (*)(DIR*)> d(opendir(dir.c_str()), closedir);
  if (!d) return out;
  while (const dirent* entry = readdir(d.get())) {
    const std::string_view file = entry->d_name;
    const bool match = at == std::string::npos
                           ? file == name || (file.starts_with(name + ".") &&
                                              all_digits(file.substr(name.size() + 1)))
                           : matches(file, prefix, suffix);
    if (match) out.push_back(dir + "/" + std::string(file));
  }
  std::ranges::sort(out);
  return out;
}

std::vector<std::string> TraceFiles::written_since() const {
  std::vector<std::string> out;
  for (const std::string& path : matching()) {
    if (written(path)) out.push_back(path);
  }
  return out;
}

}  // namespace memloupe::cli
