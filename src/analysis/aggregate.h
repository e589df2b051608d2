// Pass 2 of the model (model.h): the Aggregate, the Query applied (per
// distinct backtrace and per thread, the Metrics of the selected allocations;
// lifetimes; optional time series), built by AggregateBuilder (aggregate.cc)
// after an Overview or alongside an OverviewBuilder.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "analysis/metrics.h"
#include "analysis/overview.h"
#include "analysis/query.h"
#include "format/events.h"
#include "reader/reader.h"

namespace memloupe::analysis {

// One stack's activity in one time bucket of Aggregate::series_bucket_ns.
struct SeriesBucket {
  uint32_t index = 0;
  Count allocated;  // selected blocks allocated in the bucket
  Count freed;      // ... freed in the bucket
  Count leaked;     // ... allocated in the bucket and never freed
};

// One distinct backtrace (raw return addresses) with its selected allocations.
struct StackStats {
  uint32_t frames_begin = 0;  // into Aggregate::frame_pool, innermost first
  uint32_t frames_size = 0;
  Metrics metrics;
  std::vector<SeriesBucket> series;  // sparse, by index; empty unless Query::series_buckets
};

struct ThreadStats {
  format::ThreadId thread;
  Metrics metrics;
};

// Lifetimes of the selected blocks: bucket 0 holds lifetime 0, bucket i ≥ 1
// holds [2^(i−1), 2^i) ns.
struct LifetimeHistogram {
  static constexpr size_t kBuckets = 65;
  std::array<Count, kBuckets> freed{};
  Count never_freed;
  static size_t bucket_of(uint64_t lifetime_ns) {
    return lifetime_ns == 0 ? 0 : static_cast<size_t>(64 - __builtin_clzll(lifetime_ns));
  }
  static uint64_t bucket_floor(size_t i) { return i == 0 ? 0 : uint64_t{1} << (i - 1); }
};

struct Aggregate {
  Query query;
  Estimator estimator;
  std::vector<StackStats> stacks;   // indexed by StackId; only stacks with selected blocks
  std::vector<uint64_t> frame_pool;
  std::vector<ThreadStats> threads; // threads with selected blocks
  Metrics totals;                   // over all selected blocks
  LifetimeHistogram lifetimes;
  uint64_t rejected_blocks = 0;     // blocks the filter dropped
  // Freed by their own thread before it allocated anything else: heaptrack's
  // "temporary" (beside Metric::Temporary's lifetime threshold). Only an --all
  // trace sees every allocation in between; in a sampled one this is an upper
  // bound the views do not print.
  Count immediate;
  // The series: at most series_buckets buckets of series_bucket_ns each, a
  // power of two (series_width) in a trace finalised since 2026-11-26; an
  // older index's is what it stored (duration / buckets + 1).
  uint32_t series_buckets = 0;
  uint64_t series_bucket_ns = 1;

  std::span<const uint64_t> frames(StackId id) const {
    const StackStats& s = stacks[id.value];
    return {frame_pool.data() + s.frames_begin, s.frames_size};
  }
};

// The series' bucket width for a trace whose last time is `last_ns`: the
// smallest power of two of ns for which [0, last_ns] fits in `buckets`
// buckets, the Timeline's rule (timeline_builder.h). AggregateBuilder ends
// with it in every mode: its buckets start 1 ns wide and merge in pairs while
// the trace goes on, so nothing waits for the duration.
uint64_t series_width(uint64_t last_ns, uint32_t buckets);
// How many of `a`'s series buckets cover [0, duration_ns]: with the width
// above, between half and all of them; the rest are empty, and a view's
// time axis ends at the duration (report/profile_from_model.cc).
uint32_t series_buckets_covering(const Aggregate& a, uint64_t duration_ns);

// Three ways to run it:
//  - pass 2, after an Overview: knows the peak's allocation, so "live at the
//    peak" is decided per block; any Query.
//  - in one pass, driving an OverviewBuilder: add() passes each event on to it
//    (after its own work), so one table of live blocks serves both. Each site
//    keeps its live count and, lazily, a copy of it as it was at the latest new
//    maximum of the heap (a site's count is copied the first time it changes
//    after a new maximum; untouched since, it still holds that value), so the
//    peak costs O(1) per event. Only for queries whose filter is decided when a
//    block is allocated: !needs_first_pass(args). Its series are pass 2's, to
//    the bit (each block's buckets are added at its end, in pass 2's order).
//  - pass 2 as the events stream, driving an OverviewBuilder (for the analysis
//    index, built while the program runs): pass 2's counting, each freed block
//    settled at its free, with what needs the finished Overview kept until
//    finish(): the peak as the sum of the blocks freed since the latest new
//    maximum (reset there), and the blocks still live. The result is pass
//    2's, to the bit, for a query that keeps every block and whose resolution
//    needs no first pass (the index's); index_aggregate_test checks it.
// In all three the series are built as the blocks end, in buckets that widen
// as the trace goes on (series_width), with nothing kept for after the end.
class AggregateBuilder {
 public:
  // `overview` (pass 1) and `symbols` (read while streaming, for --focus) must
  // outlive the builder.
  AggregateBuilder(const Overview& overview, const reader::SymbolTable& symbols,
                   const Query& query);
  // One pass: add() feeds `overview` too; finish this builder before it.
  AggregateBuilder(OverviewBuilder& overview, const format::TraceInfo& info,
                   const reader::SymbolTable& symbols, const Query& query);
  // Pass 2 as the events stream, feeding `overview` like the one pass does.
  struct Streaming {};
  AggregateBuilder(Streaming, OverviewBuilder& overview, const format::TraceInfo& info,
                   const reader::SymbolTable& symbols, const Query& query);
  ~AggregateBuilder();
  AggregateBuilder(AggregateBuilder&&) noexcept;
  void add(const format::Event& event);
  void add(const format::Free& free);  // add() of a Free, without the variant
  // An Alloc for a caller that interns the backtraces itself (the index
  // builder, on another thread than this builder's): the backtrace (not read)
  // has the stack id `stack`, numbered from 0 in order of first appearance
  // among all Allocs so far; a new one (`is_new`) comes with its frames. add()
  // numbers stacks among the Allocs the filter's size, thread and window
  // clauses keep, so the two number them alike when those clauses keep every
  // Alloc, as the index's query does. Pass 2 only (either way).
  void add_interned(const format::Alloc& alloc, uint32_t stack, bool is_new,
                    std::span<const uint64_t> frames);
  Aggregate finish() &&;
  // After finish(), pass 2 as it streams: calls fn(allocation id, size,
  // stack, backtrace) for each block still live at the end, as its Alloc gave
  // them, `stack` its backtrace's number in the builder's table of stacks
  // (whose numbers have distinct frames; a number's span stays valid while
  // the builder and the Aggregate finish() gave live: its frame pool may be
  // the table's). False (and no call) in the other modes or when the
  // filter dropped a block (its backtrace is not kept).
  using LiveBlockFn = std::function<void(uint64_t, uint64_t, uint32_t, std::span<const uint64_t>)>;
  bool for_each_live(const LiveBlockFn& fn) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memloupe::analysis
