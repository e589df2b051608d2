// `memloupe run`: starting the program and waiting for it, with the terminal,
// signals and exit status behaving as if memloupe were not there.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace memloupe::cli {

struct LaunchRequest {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH like a shell does
  // Variables set (or replaced) in the program's environment; the rest of
  // memloupe's environment is passed on unchanged.
  std::vector<std::pair<std::string, std::string>> env;
  // Open descriptors (owned by the caller) to give the program as its stdin
  // and as its stdout and stderr; -1: memloupe's own (run_live.h sets them).
  int stdin_fd = -1;
  int output_fd = -1;
  // Called once the program runs (its exec succeeded), before memloupe waits
  // for it; signals are being forwarded meanwhile.
  std::function<void(int pid)> while_running;
};

struct LaunchResult {
  bool started = false;
  int exec_errno = 0;  // why the program could not be started (when !started)
  int pid = 0;
  // The status a shell would report: the exit code, or 128 + signal number if
  // the program was killed by a signal; 127/126 if it could not be started.
  int status = 0;
};

// Runs the program with memloupe's stdin/stdout/stderr and waits for it.
// While it runs, SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to memloupe are
// passed on to it (see run_launch.cc for the terminal's signals).
LaunchResult launch_and_wait(const LaunchRequest& request);

}  // namespace memloupe::cli
