#include "process.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace memloupe::testing {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string memloupe_exe() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe"; }
std::string preload_library() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/libmemloupe_preload.so"; }
std::string testprog_exe() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/launcher_testprog"; }

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "memloupe-launcher-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) std::abort();
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Process::Process(const std::vector<std::string>& argv, const std::string& dir,
                 const std::string& input, const Environment& env)
    : dir_(dir) {
  static std::atomic<int> counter{0};
  tag_ = dir + "/.process" + std::to_string(counter++);
  std::ofstream(tag_ + ".in", std::ios::binary) << input;

  std::vector<std::string> args = argv;
  std::vector<char*> argp;
  for (std::string& a : args) argp.push_back(a.data());
  argp.push_back(nullptr);

  pid_ = fork();
  if (pid_ != 0) return;
  // Child.
  const int in = open((tag_ + ".in").c_str(), O_RDONLY);
  const int out = open((tag_ + ".out").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int err = open((tag_ + ".err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
      chdir(dir_.c_str()) != 0) {
    _exit(250);
  }
  for (const std::string& name : env.unset) unsetenv(name.c_str());
  for (const auto& [name, value] : env.set) setenv(name.c_str(), value.c_str(), 1);
  execv(argp[0], argp.data());
  _exit(251);
}

Process::~Process() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

Finished Process::wait() {
  Finished f;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.out = read_file(tag_ + ".out");
  f.err = read_file(tag_ + ".err");
  for (const char* ext : {".in", ".out", ".err"}) std::filesystem::remove(tag_ + ext);
  return f;
}

}  // namespace memloupe::testing
