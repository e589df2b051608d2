// Running memloupe (and other programs) from the tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace memloupe::testing {

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

  pid_t pid() const { return pid_; }
  Finished wait();

 private:
  pid_t pid_ = -1;
  std::string dir_;
  std::string tag_;
};

inline Finished run_process(const std::vector<std::string>& argv, const std::string& dir,
                            const std::string& input = "", const Environment& env = {}) {
  return Process(argv, dir, input, env).wait();
}

// The build's memloupe, preload library and test program.
std::string memloupe_exe();
std::string preload_library();
std::string testprog_exe();

// A fresh empty directory for one test, removed by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

std::string read_file(const std::string& path);

}  // namespace memloupe::testing
