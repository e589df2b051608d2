// Running the real `memloupe` binary from the inspect and golden tests.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace memloupe::inspect_testing {

inline std::string memloupe_binary() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe"; }
inline std::string source_path(const std::string& relative) {
  return std::string(MEMLOUPE_SOURCE_DIR) + "/" + relative;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A fresh directory under the build tree for one test's files.
inline std::string scratch_dir(const std::string& name) {
  const std::string dir = std::string(MEMLOUPE_BINARY_DIR) + "/tests/inspect/scratch/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

struct CommandRun {
  int status = -1;  // exit status; -1 if it could not run or was killed
  std::string out;
  std::string err;
};

// Runs `command` through the shell; its stdout and exit status (stderr is the
// command's business: redirect it in `command`).
inline CommandRun shell(const std::string& command) {
  CommandRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Runs `memloupe ARGS` (ARGS already shell-quoted) and captures stdout and stderr.
inline CommandRun memloupe(const std::string& args) {
  // One directory per process: ctest runs each test in a process of its own,
  // several at once, and a shared one would be emptied under another's feet.
  const std::string err_path = scratch_dir("stderr." + std::to_string(::getpid())) + "/err";
  CommandRun r = shell(memloupe_binary() + " " + args + " 2>'" + err_path + "'");
  r.err = read_text(err_path);
  return r;
}

}  // namespace memloupe::inspect_testing
