#include "finalize/follow.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <chrono>

#include "reader/growing_file.h"
#include "reader/native_reader.h"
#include "reader/reader.h"

namespace memloupe::finalize {

// The follower wakes when the recorder writes to the file (inotify's
// IN_MODIFY, from the open on): a chunk sealed while it slept would otherwise
// wait for the next look, and at the exit it joins the tail if the exit came
// first. The look every kPoll stays for what inotify does not see (a file
// system that does not report, no inotify instance left): at 20 ms a poll
// left on average half a poll of events more in the tail ((b): ~100 k, ~3 ms);
// at 5 ms, with a chunk every ~10-15 ms, a quarter of a chunk (docs/RECORDER.md,
// "After the exit, 2026-11-26 (seventh round)"). A look that finds nothing is
// an fstat.
TraceFollower::TraceFollower(std::string path, const FinalizeOptions& options, std::function<bool()> written,
                             std::chrono::milliseconds poll)
    : path_(std::move(path)),
      written_(std::move(written)),
      poll_(poll),
      tap_(options.tap),
      addon_(options.symbolize ? options.addon : nullptr),
      collector_(tap_, addon_),
      preparer_(options.symbolize ? std::make_unique<SymbolPreparer>(options.symbolizer) : nullptr),
      growth_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)),
      woken_(growth_ ? eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1),
      thread_([this] { run(); }) {}

TraceFollower::~TraceFollower() {
  stop();
  if (thread_.joinable()) thread_.join();
}

void TraceFollower::stop() {
  stopping_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (woken_) {
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = write(woken_.get(), &one, sizeof one);
  }
}

void TraceFollower::wait() {
  if (!woken_) {
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, poll_, [this] { return stop_; });
    return;
  }
  // (Before the file is open only stop() and the poll's end wake it.)
  pollfd fds[2] = {{woken_.get(), POLLIN, 0}, {growth_.get(), POLLIN, 0}};
  if (poll(fds, watching_ ? 2 : 1, static_cast<int>(poll_.count())) <= 0 || !watching_) return;
  // The writes so far are about to be looked at: forget them (a write after
  // this read is seen by that look or wakes the next wait).
  alignas(inotify_event) char events[4096];
  while (read(growth_.get(), events, sizeof events) > 0) {
  }
}

bool TraceFollower::open() {
  if (written_ && !written_()) return false;
  auto file = reader::GrowingFile::open(path_);
  if (!file) return false;  // not there yet
  reader::GrowingFile* raw = file->get();
  auto grown = raw->grow();
  if (!grown) {
    failure_ = grown.error();
    return false;
  }
  auto opened = reader::open_native(std::move(*file));
  if (!opened) return false;  // the header is not all written yet: look again later
  if (!(*opened)->info().source_format.empty()) {
    failure_ = Error{path_ + " is not a memloupe trace"};
    return false;
  }
  file_ = raw;
  reader_ = std::move(*opened);
  if (woken_) watching_ = inotify_add_watch(growth_.get(), path_.c_str(), IN_MODIFY) >= 0;
  snapshot_ahead_ = reader_->info().mode == format::Mode::All;
  if (preparer_) preparer_->begin(reader_->info());
  if (tap_) tap_->begin(reader_->info());
  return true;
}

void TraceFollower::read_available(bool until_stopped) {
  reader_->resume();
  uint64_t n = 0;
  while (const format::Event* e = reader_->next()) {
    collector_.add_read(*e, *reader_);
    // The reader is left between two events: finish() continues from there.
    if (until_stopped && ++n % 4096 == 0 && stopping_.load(std::memory_order_relaxed)) return;
  }
}

void TraceFollower::run() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      if (stop_) return;
    }
    bool progressed = false;
    if (!reader_) {
      progressed = open();
    } else if (!reader_->error()) {
      read_available(true);
      if (stopping_.load(std::memory_order_relaxed)) return;
      if (preparer_) preparer_->update(collector_.so_far(), snapshot_ahead_);
      if (!reader_->error()) {
        file_->start_writeback();  // what was read is whole: the next grow() adds after it
        auto grown = file_->grow();
        if (!grown) failure_ = grown.error();
        progressed = grown && *grown;
      }
    }
    if (failure_ || (reader_ && reader_->error())) return;  // finish() takes it from here
    if (progressed) continue;
    wait();
  }
}

Expected<FollowedRead> TraceFollower::finish() {
  stop();
  if (thread_.joinable()) thread_.join();
  if (failure_) return *failure_;
  if (!reader_ && !open()) return failure_.value_or(Error{path_ + ": could not be opened while it was written"});
  if (auto e = file_->whole()) return *e;
  if (tap_) tap_->rest_at_once();
  if (!reader_->error()) read_available(false);
  FollowedRead read{std::move(collector_).finish(reader_->error()), std::move(preparer_)};
  if (read.symbols) read.symbols->update(read.collected, snapshot_ahead_);
  reader_.reset();
  return read;
}

}  // namespace memloupe::finalize
