// The index's two passes, each on two threads. Finalising an --all trace
// spends pass 1 decoding and compacting the events and building the Overview,
// and pass 2 decoding them again and building the Aggregate (interning each
// backtrace, the live table, the counts and series). Here the thread that
// decodes hands the events, reduced to what the builders need, in batches
// (EventPipe) to a worker thread that runs the builder. The results are those
// of the builders' add() over the same events, in the same order:
//  - ThreadedOverview: OverviewBuilder::add. Events other than Alloc and Free
//    (a few per thread, module and second) are added on the caller's thread
//    once the worker has caught up, so nothing but the reduced events crosses.
//  - ThreadedAggregate: AggregateBuilder::add, for a query whose size, thread
//    and window clauses keep every Alloc (model.h, add_interned), as the
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
    bool new_stack;
    format::Func func;  // mapping functions' blocks are kept apart (model.h, MappedMemory)
    uint32_t thread;
    uint32_t n_samples;
    uint32_t stack;
    uint32_t new_frames;  // of a new stack, in Batch::frames
    uint32_t bytes_per_sample;  // format::Alloc's (in what was padding)
    uint64_t time_ns;
    uint64_t id;
    uint64_t size;
  };
  struct Batch {
    std::vector<Record> records;
    std::vector<uint64_t> frames;  // of the new stacks, in order
  };
  static constexpr size_t kBatch = 8192;   // records per hand-over
  static constexpr size_t kMaxQueued = 4;  // batches waiting (bounds memory)

  explicit EventPipe(std::function<void(const Batch&)> consume);
  ~EventPipe();  // stops the worker
  EventPipe(const EventPipe&) = delete;
  EventPipe& operator=(const EventPipe&) = delete;

  // The batch being filled (push() hands it over when full).
  Batch& filling() { return filling_; }
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

class ThreadedOverview {
 public:
  explicit ThreadedOverview(const format::TraceInfo& info);
  void add(const format::Event& event);
  // Waits for the worker; rethrows what it threw.
  Overview finish() &&;

 private:
  OverviewBuilder builder_;  // the worker's, but between drain() and push()
  EventPipe pipe_;           // declared last: stopped first
};

class ThreadedAggregate {
 public:
  // `overview` must outlive this. The query must have no --focus (the worker
  // has no symbols).
  ThreadedAggregate(const Overview& overview, const Query& query);
  void add(const format::Event& event);
  // Waits for the worker; rethrows what it threw.
  Aggregate finish() &&;

 private:
  reader::SymbolTable no_symbols_;
  AggregateBuilder builder_;  // the worker's
  StackTable stacks_;         // the caller's
  EventPipe pipe_;            // declared last: stopped first
};

}  // namespace memloupe::analysis
