// The index's pass 2 on two threads. Finalising an --all trace spends most of
// pass 2 in two halves of about equal cost: decoding the events, then the
// Aggregate (interning each backtrace, the live table, the counts and series).
// Here the caller's thread (which decodes) also interns the backtraces, and
// hands the events, reduced to what the Aggregate needs, in batches to a worker
// thread that runs the AggregateBuilder (add_interned). The result is that of
// AggregateBuilder::add over the same events, for a query whose size, thread
// and window clauses keep every Alloc (model.h, add_interned); the index's does.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "analysis/model.h"
#include "analysis/stack_table.h"

namespace memloupe::analysis {

class ThreadedAggregate {
 public:
  // `overview` must outlive this. The query must have no --focus (the worker
  // has no symbols).
  ThreadedAggregate(const Overview& overview, const Query& query);
  ~ThreadedAggregate();  // stops the worker if finish() was not called
  ThreadedAggregate(const ThreadedAggregate&) = delete;
  ThreadedAggregate& operator=(const ThreadedAggregate&) = delete;

  void add(const format::Event& event);
  // Waits for the worker; rethrows what it threw.
  Aggregate finish() &&;

  static constexpr size_t kBatch = 8192;    // events per hand-over
  static constexpr size_t kMaxQueued = 4;   // batches waiting (bounds memory)

 private:
  enum class Kind : uint8_t { Alloc, Free, Time };
  struct Record {
    Kind kind;
    bool new_stack;
    uint32_t thread;
    uint32_t n_samples;
    uint32_t stack;
    uint32_t new_frames;  // of a new stack, in Batch::frames
    uint64_t time_ns;
    uint64_t id;
    uint64_t size;
  };
  struct Batch {
    std::vector<Record> records;
    std::vector<uint64_t> frames;  // of the new stacks, in order
  };

  void send();
  void run();
  void stop();

  reader::SymbolTable no_symbols_;
  AggregateBuilder builder_;  // the worker's, until it is joined
  StackTable stacks_;         // the caller's
  Batch filling_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Batch> queue_;     // guarded by mutex_
  std::vector<Batch> spare_;    // emptied batches to reuse; guarded by mutex_
  bool closing_ = false;        // guarded by mutex_
  std::exception_ptr failure_;  // guarded by mutex_
  std::thread worker_;
};

}  // namespace memloupe::analysis
