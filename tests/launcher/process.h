// Running memloupe (and other programs) from the tests.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "support/child_process.h"

namespace memloupe::testing {

using test_support::read_file;
using test_support::TempDir;

struct Environment {
  std::vector<std::pair<std::string, std::string>> set;  // added or replaced
  std::vector<std::string> unset;
};

struct Finished {
  int status = -1;  // exit code, or 128 + signal (as a shell reports it)
  std::string out;  // stdout
  std::string err;  // stderr
};

// Starts `argv` with `input` on stdin, stdout and stderr captured (in files
// under `dir`), in `dir` as working directory.
class Process {
 public:
  Process(const std::vector<std::string>& argv, const std::string& dir,
          const std::string& input = "", const Environment& env = {});
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;
  ~Process();  // kills a process that is still running

  pid_t pid() const { return child_->pid(); }
  Finished wait();

 private:
  std::string tag_;  // dir/.processN: the .in, .out and .err files
  std::unique_ptr<test_support::Child> child_;
};

inline Finished run_process(const std::vector<std::string>& argv, const std::string& dir,
                            const std::string& input = "", const Environment& env = {}) {
  return Process(argv, dir, input, env).wait();
}

// The build's memloupe, preload library and test program.
std::string memloupe_exe();
std::string preload_library();
std::string testprog_exe();

}  // namespace memloupe::testing
