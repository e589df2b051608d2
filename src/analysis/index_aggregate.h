// The index in one read of the events, built as they are read (by the
// follower while the program runs, docs/RECORDER.md): the Overview, and the
// Aggregate of the index's query by pass 2 as it streams (aggregate.h), so
// that when the events are over only what needs the finished Overview is left
// (the series' buckets, the peak's still-live blocks).
//
// The thread that decodes interns the backtraces and either runs the
// AggregateBuilder (which drives the OverviewBuilder) itself or hands the
// reduced events in batches (EventPipe) to a worker thread that does
// (Handover, below). Events other than Alloc and Free (a few
// per thread, module and second) are added on the caller's thread once the
// worker has caught up, so nothing but the reduced events (and each new
// stack's frames, once) crosses. The results are those of the builders' add()
// over the same events, in the same order: OverviewBuilder::add, and
// AggregateBuilder::add after that Overview, for a query whose size, thread
// and window clauses keep every Alloc (aggregate.h, add_interned) and that
// needs no first pass but for its series, as the index's.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <thread>
#include <vector>

#include "analysis/model.h"
#include "analysis/stack_table.h"

namespace memloupe::analysis {

// Reduced events, in batches, from the caller's thread to a consumer on a
// worker thread.
class EventPipe {
 public:
  enum class Kind : uint8_t { Alloc, Free };
  struct Record {
    Kind kind;
    bool new_stack;  // the first Alloc with its stack (ids number the stacks in order)
    format::Func func;  // mapping functions' blocks are kept apart (model.h, MappedMemory)
    uint32_t thread;
    uint32_t n_samples;
    uint32_t stack;
    uint64_t time_ns;
    uint64_t id;
    uint64_t size;
  };
  struct Batch {
    std::vector<Record> records;
    // For each new_stack record, in order: its frame count, then its frames.
    std::vector<uint64_t> frames;
  };
  static constexpr size_t kBatch = 8192;   // records per hand-over
  static constexpr size_t kMaxQueued = 4;  // batches waiting (bounds memory)

  explicit EventPipe(std::function<void(const Batch&)> consume);
  ~EventPipe();  // stops the worker
  EventPipe(const EventPipe&) = delete;
  EventPipe& operator=(const EventPipe&) = delete;

  // `new_frames`: a new_stack record's frames.
  void push(const Record& r, std::span<const uint64_t> new_frames = {}) {
    if (r.new_stack) {
      filling_.frames.push_back(new_frames.size());
      filling_.frames.insert(filling_.frames.end(), new_frames.begin(), new_frames.end());
    }
    filling_.records.push_back(r);
    if (filling_.records.size() == kBatch) send();
  }
  // Waits until the worker has consumed every record pushed; rethrows what it
  // threw. What the worker wrote is then visible to the caller, and the
  // consumer's state is the caller's until the next push().
  void drain();
  // drain(), then ends the worker.
  void finish();

 private:
  void send();
  void run();
  void stop();
  void rethrow();

  std::function<void(const Batch&)> consume_;
  Batch filling_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;     // guarded by mutex_
  std::vector<Batch> spare_;    // emptied batches to reuse; guarded by mutex_
  bool busy_ = false;           // the worker holds a batch; guarded by mutex_
  bool closing_ = false;        // guarded by mutex_
  std::exception_ptr failure_;  // guarded by mutex_
  std::thread worker_;
};

// Where the index's work on the Allocs and Frees runs (docs/ANALYSIS.md,
// "Finalise time"): on the thread that reads the events, or on a worker the
// reader hands them to in batches (EventPipe). The results are the same bytes.
enum class Handover : uint8_t {
  Inline,  // the reading thread does it all
  Worker,  // a worker thread, fed through an EventPipe
};
// The one for reading while the program runs: Inline on one or two CPUs,
// which the program keeps busy (the pipe bought no parallelism there, but cost
// the hand-over); Worker with more. Once the rest of the events is there at
// once (use_worker()), Worker on two or more. docs/RECORDER.md has the
// measurements.
Handover default_handover();

class ThreadedOverview {
 public:
  // The Overview only.
  explicit ThreadedOverview(const format::TraceInfo& info, Handover handover = default_handover());
  // Also the Aggregate of `query` (see above for which queries).
  ThreadedOverview(const format::TraceInfo& info, const Query& query, Handover handover = default_handover());
  // `key`: the reader's key of an Alloc's backtrace (reader.h), which spares
  // hashing a backtrace already interned.
  void add(const format::Event& event, const reader::BacktraceKey& key = {});
  // add() of an Alloc, of a Free (the caller has told them from the rest).
  // The usual case (the index's, read while the program runs: an Aggregate,
  // no pipe, an Alloc's stack memoised) goes straight to the Aggregate, inline
  // here: with IndexBuilder's add(), inline too, one call per event from the
  // finaliser's tap to the index (docs/RECORDER.md, "The index's per-event
  // calls"). The rest is out of line (inline, the pipe's push, the Alloc's
  // copy and the Event made of a Free for the Overview alone made both save
  // registers and build a frame: ~15 instructions of each Alloc and Free).
  void add(const format::Alloc& a, const reader::BacktraceKey& key) {
    const uint32_t stack = StackTable::memoised(key);  // (a stack not seen before: add_other)
    if (!aggregate_ || pipe_ || a.bytes_per_sample != 0 || stack == StackTable::kNone) [[unlikely]]
      return add_other(a, key);
    aggregate_->add_interned(a, stack, false, a.backtrace);
  }
  void add(const format::Free& f) {
    if (!aggregate_ || pipe_) [[unlikely]] return add_other(f);
    aggregate_->add(f);
  }
  // The events from now on are all there at once (the program exited, or the
  // file is finished): the work goes to a worker from here on if the machine
  // has a CPU for it (Handover::Worker stays so).
  void use_worker();
  struct Result {
    Overview overview;
    Aggregate aggregate;  // empty without a query
  };
  // Waits for the worker, then finishes what needed the events to be over;
  // rethrows what the worker threw.
  Result finish() &&;
  // After finish(), with a query: AggregateBuilder::for_each_live.
  bool for_each_live(const AggregateBuilder::LiveBlockFn& fn) const {
    return aggregate_ && aggregate_->for_each_live(fn);
  }

 private:
  ThreadedOverview(const format::TraceInfo& info, const std::optional<Query>& query, Handover handover);
  // add() of an Alloc or a Free but for its usual case (out of line).
  [[gnu::noinline]] void add_other(const format::Alloc& alloc, const reader::BacktraceKey& key);
  [[gnu::noinline]] void add_other(const format::Free& free);
  // The work on one Alloc or Free, on whichever thread does it.
  void consume(const EventPipe::Batch& batch);
  void drain() {
    if (pipe_) pipe_->drain();
  }
  OverviewBuilder builder_;        // the worker's, but between drain() and push()
  reader::SymbolTable no_symbols_;  // the index's query has no --focus
  std::optional<AggregateBuilder> aggregate_;  // drives builder_; the worker's, as builder_
  StackTable stacks_;              // the caller's
  std::optional<EventPipe> pipe_;  // Handover::Worker; declared last: stopped first
};

}  // namespace memloupe::analysis
