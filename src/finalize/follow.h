// Finalising while the program runs (`memloupe run`): the run waits for the
// program anyway, so a thread follows the trace as the recorder appends to it
// and does the finaliser's read of the events then (the module map, the new
// backtrace addresses, and the tap's and addon's work: the analysis index's
// Overview and its reduced events, the types' allocations). When the program
// has exited, finish() reads the rest and finalize_trace() is left with the
// compaction, the symbolisation, the index's Aggregate and the writing.
//
// The thread reads at the normal priority, beside the program: the work is
// the same whenever it is done, and the user waits for the program and the
// rest together, so the wait is the CPU spent either way; what the priority
// decides is how much is left after the exit. At nice 19 (until 2026-11-25)
// the follower got next to nothing while a multi-threaded program, or any
// other process, kept the cores busy, and its backlog waited for the exit.
// When the program has exited, the thread stops between two events and
// finish()'s caller reads the rest. docs/RECORDER.md, "Finalising while the
// program runs", has the measurements.
//
// What it delivers is what finalize_trace's own read would: the same events in
// the same order, and at the end the same damage (a killed program's cut-short
// last chunk too), because the reader it uses is the file's Reader, shown only
// whole chunks while the file grows and the whole file once the writer is done
// (reader/growing_file.h).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "finalize/event_collector.h"
#include "finalize/finalize.h"
#include "finalize/symbol_preparer.h"
#include "format/expected.h"
#include "format/unique_fd.h"

namespace memloupe::reader {
class GrowingFile;
class Reader;
}  // namespace memloupe::reader

namespace memloupe::finalize {

// The finaliser's read, done by a TraceFollower (finalize_trace takes it).
struct FollowedRead {
  Collected collected;
  // The symbolisers, prepared as the read went (null when not symbolising).
  std::unique_ptr<SymbolPreparer> symbols;
};

class TraceFollower {
 public:
  // How long the thread sleeps when it has read all of the file, unless the
  // file grows first (inotify) or finish() is called.
  static constexpr std::chrono::milliseconds kPoll{5};

  // Starts following `path` (it may not exist yet). `options`' tap and addon
  // are fed from the follower's thread, then from finish()'s caller; they must
  // outlive this, and be given to finalize_trace with the read. `written`
  // (optional, called on the follower's thread): whether the file at `path` is
  // the one being written; until it says so the file is not opened (a file
  // left there by an earlier run is truncated by the recorder when it starts).
  // `poll`: kPoll but in tests.
  TraceFollower(std::string path, const FinalizeOptions& options, std::function<bool()> written = {},
                std::chrono::milliseconds poll = kPoll);
  ~TraceFollower();  // stops the thread (without finish(): nothing is delivered)
  TraceFollower(const TraceFollower&) = delete;
  TraceFollower& operator=(const TraceFollower&) = delete;

  const std::string& path() const { return path_; }
  // The writer is done (the program exited): reads the rest of the file on
  // the calling thread and returns the read. An error when the file could not
  // be followed (never there, not a memloupe trace, grew past what can be
  // mapped): the tap and addon may have been fed part of it, so the caller
  // finalises with fresh ones.
  Expected<FollowedRead> finish();

 private:
  void run();
  // The file and its reader, once the header is there.
  bool open();
  // Reads what the file holds; `until_stopped`: returns early once finish() or
  // the destructor asks the thread to stop.
  void read_available(bool until_stopped);
  // Sleeps until the file grows, the thread is asked to stop, or poll_ has passed.
  void wait();
  // Asks the thread to stop, and wakes it.
  void stop();

  const std::string path_;
  const std::function<bool()> written_;
  const std::chrono::milliseconds poll_;
  FinalizeTap* const tap_;
  FinalizeAddon* const addon_;
  Collector collector_;
  std::unique_ptr<SymbolPreparer> preparer_;  // when symbolising
  bool snapshot_ahead_ = false;  // the trace will end with a heap snapshot (Mode::All)
  reader::GrowingFile* file_ = nullptr;  // owned by reader_
  std::unique_ptr<reader::Reader> reader_;
  std::optional<Error> failure_;  // following failed; set by the thread
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
  std::atomic<bool> stopping_{false};  // stop_, read without the lock while reading
  // The file's writes (IN_MODIFY, once it is open) and stop()'s wake-up (an
  // eventfd) end the thread's sleep; without them it sleeps on wake_.
  format::UniqueFd growth_, woken_;
  bool watching_ = false;  // growth_ watches the file (the thread's)
  std::thread thread_;  // last: started once the rest exists
};

}  // namespace memloupe::finalize
