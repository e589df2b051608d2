#include "finalize/follow.h"

#include <chrono>

#include "reader/growing_file.h"
#include "reader/native_reader.h"
#include "reader/reader.h"

namespace memloupe::finalize {
namespace {

// How often the follower looks at the file when it has read all of it: the
// recorder seals a chunk every 20 ms when busy, and what landed since the last
// look is left for after the exit. At 20 ms that was on average half a poll of
// events more in the tail ((b): ~100 k, ~3 ms; docs/RECORDER.md, "After the
// exit, 2026-11-26 (sixth round)"); a look that finds nothing is an fstat.
constexpr auto kPoll = std::chrono::milliseconds(5);

}  // namespace

TraceFollower::TraceFollower(std::string path, const FinalizeOptions& options, std::function<bool()> written)
    : path_(std::move(path)),
      written_(std::move(written)),
      tap_(options.tap),
      addon_(options.symbolize ? options.addon : nullptr),
      collector_(tap_, addon_),
      preparer_(options.symbolize ? std::make_unique<SymbolPreparer>(options.symbolizer) : nullptr),
      thread_([this] { run(); }) {}

TraceFollower::~TraceFollower() {
  stopping_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
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
    std::unique_lock lock(mutex_);
    wake_.wait_for(lock, kPoll, [this] { return stop_; });
  }
}

Expected<FollowedRead> TraceFollower::finish() {
  stopping_.store(true, std::memory_order_relaxed);
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
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
