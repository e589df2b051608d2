// A status line on stderr for a step that may take seconds (finalising,
// symbolising): shown only when stderr is a terminal, only once the step has
// run for a second (MEMLOUPE_PROGRESS_DELAY_MS overrides that, for tests), then
// redrawn four times a second with what `status()` says and the time taken,
// and wiped when the step ends. Piped or redirected stderr gets nothing.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace memloupe::cli {

class ProgressLine {
 public:
  // `status` is called from the line's own thread: it must only read atomics.
  ProgressLine(std::string what, std::function<std::string()> status);
  ~ProgressLine();  // wipes the line
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void run();

  const std::string what_;
  const std::function<std::string()> status_;
  std::mutex mutex_;
  std::condition_variable done_changed_;
  bool done_ = false;  // guarded by mutex_
  bool drawn_ = false;  // only the line's thread touches it before join
  std::thread thread_;
};

}  // namespace memloupe::cli
