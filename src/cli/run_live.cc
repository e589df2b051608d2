#include "cli/run_live.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "cli/live_follow.h"

namespace memloupe::cli {
namespace {

// Whether `pid` (our child) has exited, without reaping it: launch_and_wait does that.
bool has_exited(int pid) {
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid;
}

}  // namespace

RunLive::~RunLive() {
  for (int fd : {null_fd_, output_fd_})
    if (fd >= 0) close(fd);
  if (!started_ && !output_path_.empty()) std::remove(output_path_.c_str());  // the program never ran
}

Expected<bool> RunLive::prepare(LaunchRequest& request, const OutputPlan& plan, double interval) {
  plan_ = plan;
  interval_ = interval;
  // Beside the trace, under a name of memloupe's own until the program's pid is known.
  output_path_ = (std::filesystem::path(plan.pattern).parent_path() /
                  fmt::format(".memloupe-live.{}.out", getpid())).string();
  null_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  output_fd_ = open(output_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (null_fd_ < 0 || output_fd_ < 0)
    return Error{fmt::format("--live: cannot create {}: {}", output_path_, std::strerror(errno))};
  request.stdin_fd = null_fd_;
  request.output_fd = output_fd_;
  request.while_running = [this](int pid) { follow(pid); };
  return true;
}

void RunLive::follow(int pid) {
  started_ = true;
  const std::string raw = expand(plan_.pattern, pid);
  const std::string named = plan_.fixed_output.value_or(raw) + ".out";
  if (std::rename(output_path_.c_str(), named.c_str()) == 0) output_path_ = named;
  follow_live(LiveFollow{raw, interval_, [pid] { return has_exited(pid); }});
  if (!has_exited(pid)) fmt::print(stderr, "memloupe: the live view is closed; waiting for process {} to exit\n", pid);
}

void RunLive::report() const {
  if (started_) fmt::print(stderr, "memloupe: the program's output is in {}\n", output_path_);
}

}  // namespace memloupe::cli
