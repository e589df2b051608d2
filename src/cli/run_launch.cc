#include "cli/run_launch.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "format/unique_fd.h"

extern char** environ;

namespace memloupe::cli {
namespace {

constexpr std::array kForwarded = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

// The running child, for the signal handler. Written before the handlers are
// installed and cleared after they are removed, so the handler never sees a
// stale pid.
volatile sig_atomic_t g_child = 0;

// The program stays in memloupe's process group, so it keeps the terminal
// (reads from it, gets Ctrl-Z) exactly as without memloupe. A signal the
// terminal generates (Ctrl-C, Ctrl-\, hangup) is sent by the kernel to the
// whole foreground group and reaches the program directly; forwarding it too
// would deliver it twice. Those arrive with si_code SI_KERNEL; everything sent
// with kill(2) and friends (SI_USER, SI_QUEUE, SI_TKILL) is for the program.
void forward(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL) return;
  const pid_t child = g_child;
  if (child > 0) kill(child, sig);
}

// Handlers installed for the lifetime of the object, the old ones put back after.
class ForwardSignals {
 public:
  ForwardSignals() {
    struct sigaction sa {};
    sa.sa_sigaction = forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < kForwarded.size(); ++i) sigaction(kForwarded[i], &sa, &old_[i]);
  }
  ~ForwardSignals() {
    for (size_t i = 0; i < kForwarded.size(); ++i) sigaction(kForwarded[i], &old_[i], nullptr);
  }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;

 private:
  std::array<struct sigaction, kForwarded.size()> old_{};
};

std::vector<std::string> build_environment(const LaunchRequest& request) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    const std::string_view name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : request.env) replaced = replaced || key == name;
    if (!replaced) env.emplace_back(entry);
  }
  for (const auto& [key, value] : request.env) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int shell_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

}  // namespace

LaunchResult launch_and_wait(const LaunchRequest& request) {
  LaunchResult result;
  // Everything the child needs is built before fork.
  std::vector<std::string> argv_strings = request.argv;
  std::vector<std::string> env_strings = build_environment(request);
  std::vector<char*> argv = pointers(argv_strings);
  std::vector<char*> envp = pointers(env_strings);

  // exec failure is reported through a close-on-exec pipe: EOF means the
  // exec succeeded, 4 bytes are the errno of a failed one.
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.exec_errno = errno;
    result.status = 127;
    return result;
  }
  format::UniqueFd read_end(fds[0]), write_end(fds[1]);

  // Block the forwarded signals until the child's pid is known to the handler.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);

  const pid_t pid = fork();
  if (pid == 0) {
    // The child starts with memloupe's original signal dispositions and mask.
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    if (request.stdin_fd >= 0) dup2(request.stdin_fd, STDIN_FILENO);
    if (request.output_fd >= 0) dup2(request.output_fd, STDOUT_FILENO), dup2(request.output_fd, STDERR_FILENO);
    execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    [[maybe_unused]] ssize_t n = write(write_end.get(), &err, sizeof err);
    _exit(127);
  }
  if (pid < 0) {
    result.exec_errno = errno;
    result.status = 127;
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return result;
  }
  write_end.reset();
  g_child = pid;
  result.pid = pid;
  int wait_status = 0;
  {
    ForwardSignals forwarding;
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);

    int err = 0;
    ssize_t n;
    do {
      n = read(read_end.get(), &err, sizeof err);
    } while (n < 0 && errno == EINTR);
    if (n == 0 && request.while_running) request.while_running(pid);
    while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
    }
    sigprocmask(SIG_BLOCK, &forwarded, nullptr);
    g_child = 0;
    if (n == static_cast<ssize_t>(sizeof err)) {
      result.exec_errno = err;
      // As a shell: 127 for a program that is not there, 126 for one that is
      // there but cannot be executed.
      result.status = err == ENOENT || err == ENOTDIR ? 127 : 126;
    } else {
      result.started = true;
      result.status = shell_status(wait_status);
    }
  }
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  return result;
}

}  // namespace memloupe::cli
