// The analysis model: everything the views need, built from a trace in one or
// two streaming passes (see docs/ANALYSIS.md, "How the model is built").
//
//   pass 1  OverviewBuilder   filter-independent facts: info, threads, modules,
//                             exact call totals, the estimated heap over time
//                             (downsampled), its peak, RSS, markers.
//   pass 2  AggregateBuilder  the Query applied: per distinct backtrace (StackStats)
//                             and per thread, the Metrics of the selected
//                             allocations; lifetimes; optional time series.
//   then    CallTree          stacks expanded into frames (inlined frames included),
//                             grouped (by function by default), hidden frames
//                             dropped; root = outermost frame.
//
// Memory is proportional to distinct stacks, frames and live blocks, never to the
// number of events: live blocks sit in a hash table keyed by AllocId, the heap
// series has at most kMaxTimelinePoints buckets.
//
// Every Count is a sum over sampled blocks; turn it into bytes/objects with the
// Estimator (estimate.h), which also gives the 95% interval.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/estimate.h"
#include "analysis/query.h"
#include "format/events.h"
#include "format/expected.h"
#include "reader/reader.h"

namespace memloupe::analysis {

using StackId = format::StrongId<struct StackTag, uint32_t>;
using NodeId = format::StrongId<struct NodeTag, uint32_t>;
using FrameId = format::StrongId<struct FrameTag, uint32_t>;

// What is measured about a set of allocations (all of them pass the Query's filter).
enum class Metric : uint8_t {
  Allocated,  // all selected blocks
  Freed,      // ... freed before the end of the trace
  Live,       // ... live in Query::live_window (live at T); without one, the same as Peak
  Peak,       // ... live when the whole heap peaked (Overview::peak)
  Leaked,     // ... never freed (live at the end)
  Temporary,  // ... freed by their own thread within Query::temporary_ns
};
inline constexpr size_t kMetricCount = 6;
std::string_view metric_name(Metric m);  // "allocated", "freed", "live", "peak", ...
std::optional<Metric> metric_from_name(std::string_view name);

struct Metrics {
  std::array<Count, kMetricCount> counts{};
  Count& operator[](Metric m) { return counts[static_cast<size_t>(m)]; }
  const Count& operator[](Metric m) const { return counts[static_cast<size_t>(m)]; }
  Metrics& operator+=(const Metrics& o) {
    for (size_t i = 0; i < kMetricCount; ++i) counts[i] += o.counts[i];
    return *this;
  }
};

// ---------------------------------------------------------------- pass 1

struct ThreadInfo {
  format::ThreadId id;
  uint32_t os_tid = 0;
  std::string name;             // last name given; empty if none
  uint64_t start_ns = 0;
  std::optional<uint64_t> end_ns;
};

struct ModuleInfo {
  uint64_t start = 0;      // lowest mapped address
  uint64_t end = 0;        // one past the highest
  uint64_t load_bias = 0;  // runtime address = ELF vaddr + load_bias
  std::string path;
  std::string build_id;    // lower-case hex; empty if unknown
  uint64_t load_ns = 0;
  uint64_t unload_ns = kForever;
};

struct MarkerInfo {
  format::ThreadId thread;
  uint64_t time_ns = 0;
  std::string name;
};

// memloupe_set_rate() during the run: from `time_ns` on, one sample per
// `bytes_per_sample` bytes (the Estimator weighs each block by its own).
struct RateChangeInfo {
  uint64_t time_ns = 0;
  uint64_t bytes_per_sample = 0;
};

// One bucket of the downsampled heap series; estimates in bytes.
struct HeapPoint {
  double live_end = 0;   // live at the end of the bucket
  double live_max = 0;   // highest value inside the bucket
  double live_min = 0;   // lowest value inside the bucket
  double allocated = 0;  // allocated during the bucket
  double freed = 0;      // freed during the bucket
};

// Bucket i covers [i·bucket_ns, (i+1)·bucket_ns). The width doubles (and pairs
// of buckets merge) whenever the trace outgrows kMaxTimelinePoints.
inline constexpr size_t kMaxTimelinePoints = 2048;
struct Timeline {
  uint64_t bucket_ns = 1;
  std::vector<HeapPoint> points;
};

// The peak is reached right after an allocation; naming that allocation lets
// pass 2 tell exactly which blocks were live then, even among events that share
// a timestamp: a block was live at the peak iff its id ≤ alloc and it was not
// freed before the Alloc event of `alloc`.
struct Peak {
  uint64_t time_ns = 0;
  std::optional<format::AllocId> alloc;  // absent when the trace has no allocation
  Count live;  // the blocks live at that instant (estimate with the Estimator)
};

// Mapped memory: blocks of the mapping functions (format::func_maps: anonymous
// mmap/mremap and the program break), which the overview keeps apart from the
// heap: heap + mapped is the memory the program asked for, which RSS follows
// (docs/ANALYSIS.md, "Mapped memory"). Empty for traces without such blocks.
struct MappedMemory {
  Count allocated;  // every mapping block
  Count leaked;     // still mapped at the end
  Count peak;       // the mapping blocks live when the mapped total peaked
  uint64_t peak_ns = 0;
  Timeline series;  // the mapped total over time (the heap's buckets and rules)
  // The highest estimated heap + mapped total, and when: what peak RSS is to be
  // compared with (the two peaks need not coincide).
  double combined_peak_bytes = 0;
  uint64_t combined_peak_ns = 0;
  bool any() const { return !allocated.empty(); }
};

struct Overview {
  format::TraceInfo info;
  Estimator estimator;
  uint64_t duration_ns = 0;  // time of the last event (TraceEnd if present)
  std::optional<format::EndReason> end_reason;  // absent: the trace stops without a TraceEnd
  std::optional<Error> error;                   // damage: everything before it was used

  uint64_t events = 0;
  uint64_t alloc_events = 0;
  uint64_t free_events = 0;
  uint64_t unmatched_frees = 0;  // frees of ids never allocated (or freed twice)
  uint64_t time_inversions = 0;  // events earlier than their predecessor (clamped)

  std::vector<ThreadInfo> threads;  // indexed by ThreadId
  std::vector<ModuleInfo> modules;  // in load order
  std::vector<MarkerInfo> markers;  // at most kMaxMarkers, in time order
  std::vector<RateChangeInfo> rate_changes;  // at most kMaxMarkers, in time order (not in the index)
  std::optional<format::CallTotals> call_totals;  // the last one: whole-run exact totals

  Count allocated;  // every heap allocation of the trace (mapped memory apart)
  Count leaked;     // never freed (heap)
  Peak peak;        // of the estimated live heap (unfiltered; mapped memory apart)
  Timeline heap;
  MappedMemory mapped;
  std::vector<format::RssSample> rss;  // at most kMaxTimelinePoints (pairs merged by max)
  uint64_t peak_rss = 0;
};
inline constexpr size_t kMaxMarkers = 10'000;

class OverviewBuilder {
 public:
  explicit OverviewBuilder(const format::TraceInfo& info);
  ~OverviewBuilder();
  OverviewBuilder(OverviewBuilder&&) noexcept;
  void add(const format::Event& event);
  // `error` is the reader's error (damage), if any.
  Overview finish(std::optional<Error> error = {}) &&;

  // For an AggregateBuilder driving this builder in one pass: it keeps the live
  // blocks itself and hands over each Alloc / Free with the block's Count
  // (nullptr: a free of an unknown block), instead of add().
  void add_alloc(const format::Alloc& alloc, const Count& count);
  void add_free(const format::Free& free, const Count* count);
  // (A free's function tells a mapping block's end from a heap block's: only
  // the mapping functions end mapping blocks.)
  // While streaming:
  uint64_t new_maxima() const;  // times the live heap has reached a new maximum so far
  uint64_t last_time() const;   // the latest event time so far (clamped)
  const std::vector<ModuleInfo>& modules_so_far() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- pass 2

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
  static size_t bucket_of(uint64_t lifetime_ns);
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
  uint32_t series_buckets = 0;
  uint64_t series_bucket_ns = 1;

  std::span<const uint64_t> frames(StackId id) const {
    const StackStats& s = stacks[id.value];
    return {frame_pool.data() + s.frames_begin, s.frames_size};
  }
};

// Two ways to run it:
//  - pass 2, after an Overview: knows the peak's allocation, so "live at the
//    peak" is decided per block; any Query.
//  - in one pass, driving an OverviewBuilder: add() passes each event on to it
//    (after its own work), so one table of live blocks serves both. Each site
//    keeps its live count and, lazily, a copy of it as it was at the latest new
//    maximum of the heap (a site's count is copied the first time it changes
//    after a new maximum; untouched since, it still holds that value), so the
//    peak costs O(1) per event. Only for queries whose filter is decided when a
//    block is allocated: !needs_first_pass(args).
class AggregateBuilder {
 public:
  // `overview` (pass 1) and `symbols` (read while streaming, for --focus) must
  // outlive the builder.
  AggregateBuilder(const Overview& overview, const reader::SymbolTable& symbols,
                   const Query& query);
  // One pass: add() feeds `overview` too; finish this builder before it.
  AggregateBuilder(OverviewBuilder& overview, const format::TraceInfo& info,
                   const reader::SymbolTable& symbols, const Query& query);
  ~AggregateBuilder();
  AggregateBuilder(AggregateBuilder&&) noexcept;
  void add(const format::Event& event);
  // add() in parts, for a caller that interns the backtraces itself (the index
  // builder, on another thread than this builder's). add_interned: an Alloc
  // whose backtrace (not read) has the stack id `stack`, numbered from 0 in
  // order of first appearance among all Allocs so far; a new one (`is_new`)
  // comes with its frames. add() numbers stacks among the Allocs the filter's
  // size, thread and window clauses keep, so the two number them alike when
  // those clauses keep every Alloc, as the index's query does. add_time: any
  // event but an Alloc or a Free, by its time (in pass 2 that is all add()
  // uses of it). Not for one pass (OverviewBuilder alongside).
  void add_interned(const format::Alloc& alloc, uint32_t stack, bool is_new,
                    std::span<const uint64_t> frames);
  void add_time(uint64_t time_ns);
  Aggregate finish() &&;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---------------------------------------------------------------- views

// One frame as the views show it. Inlined frames are frames of their own.
struct Frame {
  std::string key;       // identity under the tree's Grouping; stable across traces
  std::string function;  // demangled; if unknown, "module+0xoffset" or "0xaddress"
  std::string file;      // empty if unknown; under Grouping::Function, the location
  uint32_t line = 0;     //   of the first address seen for the function
  uint32_t column = 0;
  uint64_t address = 0;  // a return address that produced this frame
  std::string module;    // path of the module holding `address`; empty if unknown
  bool symbolized = false;
  bool inlined = false;
};

struct Node {
  NodeId parent;            // the root is its own parent
  FrameId frame;            // meaningless for the root
  uint32_t depth = 0;       // 0 for the root
  std::vector<NodeId> children;
  Metrics self;             // blocks whose (view) stack ends here
  Metrics total;            // self + all descendants
};

class CallTree {
 public:
  static constexpr NodeId kRoot{0};
  CallTree();

  const Node& node(NodeId id) const { return nodes_[id.value]; }
  const Frame& frame(FrameId id) const { return frames_[id.value]; }
  size_t node_count() const { return nodes_.size(); }
  size_t frame_count() const { return frames_.size(); }
  // Frames from the root's child down to `id` (outermost first).
  std::vector<FrameId> path(NodeId id) const;
  // The leaf node each StackId of the Aggregate landed on (kRoot if every frame was hidden).
  NodeId leaf_of(StackId id) const { return stack_leaf_[id.value]; }

 private:
  friend class CallTreeBuilder;
  friend CallTree build_call_tree(const struct Aggregate&, const reader::SymbolTable&,
                                  const std::vector<ModuleInfo>&);
  std::vector<Node> nodes_;
  std::vector<Frame> frames_;
  std::vector<NodeId> stack_leaf_;
};

CallTree build_call_tree(const Aggregate& aggregate, const reader::SymbolTable& symbols,
                         const std::vector<ModuleInfo>& modules);

// ---------------------------------------------------------------- all of it

struct Model {
  Overview overview;
  Aggregate aggregate;
  reader::SymbolTable symbols;
  CallTree tree;
  bool from_index = false;  // answered by the trace's analysis index (index.h), not by streaming
  // Set when the trace has an index that could not be used (damaged, or built
  // for other events): what was wrong, naming the offset. The model was then
  // streamed as usual; the CLI prints this as a warning.
  std::optional<std::string> index_note;
};

// Called with the fraction done (0..1, over both passes) every few thousand events.
using Progress = std::function<void(double fraction)>;

// Reads the trace once when !needs_first_pass(args) (overview and aggregate side
// by side), else twice (pass 1, then pass 2 with the query resolved against pass
// 1). Errors: the file cannot be opened/is not a trace, or bad arguments. Damage in
// the middle of the trace is not an error: Overview::error says where reading stopped.
//
// A finalised trace carries an analysis index (index.h); with UseIndex::IfFresh
// a query it answers is taken from it without reading the events.
enum class UseIndex : uint8_t { IfFresh, Never };
Expected<Model> analyze_file(const std::string& path, const QueryArgs& args,
                             const Progress& progress = {}, UseIndex use_index = UseIndex::IfFresh);

// The same over events held in memory (tests, hand-built traces). Passes::Two
// forces the two-pass method even where one pass would do, so tests can check
// that both give the same model.
enum class Passes : uint8_t { Fewest, Two };
Expected<Model> analyze_events(const format::TraceInfo& info, const reader::SymbolTable& symbols,
                               std::span<const format::Event> events, const QueryArgs& args,
                               Passes passes = Passes::Fewest);

}  // namespace memloupe::analysis
