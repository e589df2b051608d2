// Pass 1 of the model (model.h): the Overview, the filter-independent facts
// of a trace (info, threads, modules, exact call totals, the estimated heap
// over time, its peak, RSS, markers), built by OverviewBuilder (overview.cc).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/event_time.h"
#include "analysis/metrics.h"
#include "analysis/query.h"
#include "format/events.h"
#include "reader/reader.h"

namespace memloupe::analysis {

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

struct OverviewState;

class OverviewBuilder {
 public:
  explicit OverviewBuilder(const format::TraceInfo& info);
  ~OverviewBuilder();
  OverviewBuilder(OverviewBuilder&&) noexcept;
  void add(const format::Event& event);
  // `error` is the reader's error (damage), if any.
  Overview finish(std::optional<Error> error = {}) &&;

  // For an AggregateBuilder driving this builder (one pass, or pass 2 as it
  // streams): the Overview being built and its accounting
  // (overview_state.h), which the driver hands each Alloc and Free with the
  // block (it keeps the live blocks itself) and its time `t` clamped by the
  // driver's clock: one clamp per event for both (two clocks clamped the same
  // times, ~4 instructions each per event). The driver's clock is
  // OverviewState::clock around add() of the other events (they are clamped
  // here) and at the driver's finish (copied in and out).
  OverviewState& state();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memloupe::analysis
