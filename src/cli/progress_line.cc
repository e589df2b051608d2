#include "cli/progress_line.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace memloupe::cli {
namespace {

std::chrono::milliseconds delay() {
  if (const char* env = std::getenv("MEMLOUPE_PROGRESS_DELAY_MS")) return std::chrono::milliseconds(std::atoll(env));
  return std::chrono::seconds(1);
}

}  // namespace

ProgressLine::ProgressLine(std::string what, std::function<std::string()> status)
    : what_(std::move(what)), status_(std::move(status)) {
  if (::isatty(STDERR_FILENO) == 1) thread_ = std::thread([this] { run(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    done_ = true;
  }
  done_changed_.notify_all();
  thread_.join();
  if (drawn_) fmt::print(stderr, "\r\033[K");
}

void ProgressLine::run() {
  const auto start = std::chrono::steady_clock::now();
  std::unique_lock lock(mutex_);
  // A zero delay (tests) draws at least once, however fast the step ends.
  const std::chrono::milliseconds wait = delay();
  if (wait.count() > 0 && done_changed_.wait_for(lock, wait, [this] { return done_; })) return;
  do {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print(stderr, "\r\033[K  {}: {} ({:.1f} s)", what_, status_(), seconds);
    std::fflush(stderr);
    drawn_ = true;
  } while (!done_changed_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; }));
}

}  // namespace memloupe::cli
