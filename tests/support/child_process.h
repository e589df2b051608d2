// Starting programs from the end-to-end tests: one child with stdin from a file,
// stdout and stderr written to files, an exact environment and working directory.
// The launcher's and the recorder's suites build their own Process on this.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace memloupe::test_support {

namespace fs = std::filesystem;

// A fresh empty directory, removed with everything in it by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& path);  // empty if it cannot be read

// This process's environment, NAME=value each.
std::vector<std::string> current_environment();

// Whether `var` (NAME=value) is one of memloupe's settings that a child
// started without them must not inherit: every MEMLOUPE_* variable but
// MEMLOUPE_CACHE_DIR, which ctest sets to keep the tests' inflated debug files
// under the build tree (cmake/memloupe.cmake) and which changes no result.
bool is_memloupe_setting(const std::string& var);

struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is the program's path
  std::vector<std::string> env;   // the child's whole environment
  fs::path cwd;                   // empty: ours
  fs::path stdin_file;            // empty: /dev/null
  fs::path stdout_file, stderr_file;
};

struct ChildExit {
  int wait_status = 0;  // as from waitpid
  bool timed_out = false;
};

class Child {
 public:
  explicit Child(const ChildSpec& spec);  // throws std::runtime_error if it cannot start
  ~Child();                               // kills (SIGKILL) and reaps a child still running
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }
  // Waits for the exit; past `timeout`, kills it with SIGKILL and says so.
  ChildExit wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt);

 private:
  pid_t pid_ = -1;
};

}  // namespace memloupe::test_support
