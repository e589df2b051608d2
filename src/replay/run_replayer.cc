#include "replay/run_replayer.h"

#include <signal.h>
#include <spawn.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

extern char** environ;

namespace memloupe::replay {

Expected<OpFile> OpFile::create() {
  // No MFD_CLOEXEC: the replayer children inherit it.
  const int fd = memfd_create("memloupe-replay-ops", 0);
  if (fd < 0) return Error{std::string("cannot create the prepared ops' memory file: ") + std::strerror(errno)};
  return OpFile(fd);
}

OpFile::~OpFile() {
  if (fd_ >= 0) ::close(fd_);
}

Expected<Measurements> run_replayer(const std::string& replayer, const OpFile& ops, const std::string& library,
                                    double timeout_s) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LD_PRELOAD=", 11) != 0) env.emplace_back(*e);
  }
  if (!library.empty()) env.push_back("LD_PRELOAD=" + library);
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string ops_path = ops.child_path();
  char* argv[] = {const_cast<char*>(replayer.c_str()), const_cast<char*>(ops_path.c_str()), nullptr};

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return Error{std::string("pipe: ") + std::strerror(errno)};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, replayer.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (rc != 0) {
    ::close(out[0]);
    return Error{"cannot start " + replayer + ": " + std::strerror(rc)};
  }
  // The replayer writes its results at the end, so the pipe stays quiet until
  // then: wait on it until the deadline.
  std::string text;
  char buf[4096];
  bool timed_out = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{out[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 60'000)));
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    const ssize_t n = ::read(out[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Error{"the replayer did not finish within " + std::to_string(static_cast<long long>(timeout_s)) +
                 " s and was killed (an allocator deadlock?)"};
  }
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = sigabbrev_np(sig);
    return Error{"the replayer was killed by signal " + std::to_string(sig) + " (SIG" + (name ? name : "?") + ")" +
                 (sig == SIGKILL ? ", perhaps by the OOM killer" : ", an allocator crash?")};
  }
  if (WEXITSTATUS(status) != 0)
    return Error{"the replayer exited with status " + std::to_string(WEXITSTATUS(status)) + " (see its message above)"};
  return parse_measurements(text);
}

}  // namespace memloupe::replay
