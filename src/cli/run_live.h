// `memloupe run --live -- PROGRAM`: the live view (live_follow.h) on the trace
// as it is written, from the moment the program starts.
//
// Decisions (docs/ATTACH.md, "run --live"): the terminal is the view's, so the
// program's stdin is /dev/null and its stdout and stderr go to TRACE.out beside
// the trace (named once its pid, and so the trace's name, is known); the view
// follows the launched image's trace (after an exec it shows that trace's end).
#pragma once

#include <optional>
#include <string>

#include "cli/run_launch.h"
#include "cli/run_output.h"
#include "format/expected.h"

namespace memloupe::cli {

class RunLive {
 public:
  RunLive() = default;
  ~RunLive();
  RunLive(const RunLive&) = delete;
  RunLive& operator=(const RunLive&) = delete;

  // Opens /dev/null and the output file, and hooks the view into `request`
  // (which must not outlive this object).
  Expected<bool> prepare(LaunchRequest& request, const OutputPlan& plan, double interval);
  // After the run: says where the program's output is.
  void report() const;

 private:
  void follow(int pid);

  OutputPlan plan_;
  double interval_ = 1.0;
  int null_fd_ = -1, output_fd_ = -1;
  bool started_ = false;
  std::string output_path_;  // the temporary name, then TRACE.out
};

}  // namespace memloupe::cli
