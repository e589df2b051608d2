#include "process.h"

#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <fstream>

namespace memloupe::testing {

std::string memloupe_exe() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe"; }
std::string preload_library() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/libmemloupe_preload.so"; }
std::string testprog_exe() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/launcher_testprog"; }

namespace {

// Ours with `env` applied.
std::vector<std::string> child_environment(const Environment& env) {
  std::vector<std::string> out;
  for (std::string& e : test_support::current_environment()) {
    const std::string name = e.substr(0, e.find('='));
    bool drop = false;
    for (const std::string& u : env.unset) drop |= u == name;
    for (const auto& set : env.set) drop |= set.first == name;
    if (!drop) out.push_back(std::move(e));
  }
  for (const auto& [name, value] : env.set) out.push_back(name + "=" + value);
  return out;
}

}  // namespace

Process::Process(const std::vector<std::string>& argv, const std::string& dir,
                 const std::string& input, const Environment& env) {
  static std::atomic<int> counter{0};
  tag_ = dir + "/.process" + std::to_string(counter++);
  std::ofstream(tag_ + ".in", std::ios::binary) << input;
  child_ = std::make_unique<test_support::Child>(
      test_support::ChildSpec{argv, child_environment(env), dir, tag_ + ".in", tag_ + ".out", tag_ + ".err"});
}

Process::~Process() = default;  // the Child kills one still running

Finished Process::wait() {
  const int status = child_->wait().wait_status;
  Finished f;
  f.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.out = read_file(tag_ + ".out");
  f.err = read_file(tag_ + ".err");
  for (const char* ext : {".in", ".out", ".err"}) std::filesystem::remove(tag_ + ext);
  return f;
}

}  // namespace memloupe::testing
