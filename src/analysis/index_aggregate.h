// The index in one read of the events. Finalising an --all trace spends that
// read decoding and compacting the events and building the Overview; the
// Aggregate of the index's query needs the finished Overview (the duration for
// its series, the peak's allocation for "live at the peak"), so it cannot be
// built alongside. Instead of decoding the events a second time, the read
// keeps them reduced to what AggregateBuilder reads (AggregateLog: a few bytes
// per event, the backtraces interned) and pass 2 replays that.
//
// The thread that decodes hands the reduced events in batches (EventPipe) to a
// worker thread that runs the OverviewBuilder and appends to the log. The
// results are those of the builders' add() over the same events, in the same
// order:
//  - ThreadedOverview: OverviewBuilder::add. Events other than Alloc and Free
//    (a few per thread, module and second) are added on the caller's thread
//    once the worker has caught up, so nothing but the reduced events crosses.
//  - AggregateLog::replay: AggregateBuilder::add, for a query whose size,
//    thread and window clauses keep every Alloc (model.h, add_interned), as the
//    index's does. The caller's thread interns the backtraces.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "analysis/model.h"
#include "analysis/stack_table.h"

namespace memloupe::analysis {

// Reduced events, in batches, from the caller's thread to a consumer on a
// worker thread.
class EventPipe {
 public:
  enum class Kind : uint8_t { Alloc, Free, Time };
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
  };
  static constexpr size_t kBatch = 8192;   // records per hand-over
  static constexpr size_t kMaxQueued = 4;  // batches waiting (bounds memory)

  explicit EventPipe(std::function<void(const Batch&)> consume);
  ~EventPipe();  // stops the worker
  EventPipe(const EventPipe&) = delete;
  EventPipe& operator=(const EventPipe&) = delete;

  void push(const Record& r) {
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

// The reduced events, a few bytes each (varints, times and ids as differences),
// in blocks that are appended to without moving what is written.
class AggregateLog {
 public:
  // On the worker thread, in the order of the events.
  void append(const EventPipe::Record& r);
  // Calls `builder`'s add_interned, add and add_time as AggregateBuilder::add
  // would for the logged events, in order; a new stack's frames come from
  // `stacks` (the table the caller interned them in).
  void replay(AggregateBuilder& builder, const StackTable& stacks) const;
  uint64_t bytes() const;  // held, for the record

 private:
  static constexpr size_t kBlock = size_t{1} << 20;
  std::vector<std::vector<uint8_t>> blocks_;
  uint64_t time_ = 0;  // of the last record appended
  uint64_t id_ = 0;    // of the last Alloc or Free appended
};

class ThreadedOverview {
 public:
  explicit ThreadedOverview(const format::TraceInfo& info);
  // Also keeps the events for the Aggregate: interns the backtraces in
  // `stacks` and logs every event in `log` (both the caller's; `log` is written
  // by the worker, and is the caller's again once finish() returns).
  ThreadedOverview(const format::TraceInfo& info, StackTable& stacks, AggregateLog& log);
  void add(const format::Event& event);
  // Waits for the worker; rethrows what it threw.
  Overview finish() &&;

 private:
  OverviewBuilder builder_;        // the worker's, but between drain() and push()
  StackTable* stacks_ = nullptr;   // the caller's
  AggregateLog* log_ = nullptr;    // the worker's until finish()
  EventPipe pipe_;                 // declared last: stopped first
};

}  // namespace memloupe::analysis
