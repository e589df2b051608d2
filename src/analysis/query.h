// What to look at: a time selection, filters on allocations, and the options of
// the views. Semantics follow memtrace_viewer (see docs/ANALYSIS.md):
//   an allocation a is live at t      ⇔  a.alloc ≤ t < a.free
//   a is live in [t1, t2]             ⇔  a.alloc ≤ t2 ∧ a.free > t1
//   a is allocated (freed) in [t1,t2] ⇔  t1 ≤ a.alloc (a.free) ≤ t2
// A block never freed stays live through the end of the trace (a.free = +∞ in
// these tests), so "live at the end" (--at-end) is exactly "leaked"; its lifetime
// is measured up to the end of the trace.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "format/events.h"
#include "format/expected.h"

namespace memloupe::analysis {

struct Overview;

inline constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

// A closed time interval in ns since trace start; an instant when begin == end.
struct TimeWindow {
  uint64_t begin_ns = 0;
  uint64_t end_ns = 0;
  bool instant() const { return begin_ns == end_ns; }
};

// Which allocations a time window selects.
enum class WindowTest : uint8_t { Live, Allocated, Freed };

// Which allocation functions' blocks: the heap's (malloc, new, ...), mapped
// memory's (format::func_maps: anonymous mmap/mremap, the program break), or both.
enum class BlockKind : uint8_t { All, Heap, Mapped };
// "all", "heap", "mapped".
std::optional<BlockKind> block_kind_from_name(std::string_view name);

// A resolved filter: an allocation is kept when every clause holds.
struct Filter {
  BlockKind kind = BlockKind::All;
  std::optional<TimeWindow> window;
  WindowTest test = WindowTest::Live;
  // --at-peak: the window is the peak's instant, and "live then" is decided by
  // event order (allocated up to the peak's allocation, freed after it), as the
  // peak itself is: exact even among the events that share the peak's tick
  // (a 32 µs tick in --all traces, docs/FORMAT.md §5.2).
  bool at_peak = false;
  uint64_t min_size = 0;
  uint64_t max_size = kForever;
  // Lifetime = free − alloc; a block never freed lives until the end of the trace.
  uint64_t min_lifetime_ns = 0;
  uint64_t max_lifetime_ns = kForever;
  std::optional<format::ThreadId> thread;
  // Keep only stacks with a frame whose function contains one of these.
  std::vector<std::string> focus;
  // Drop frames whose function contains one of these (views only; not a filter on allocations).
  std::vector<std::string> hide;
};

// How frames are identified in the views.
enum class Grouping : uint8_t {
  Function,  // by demangled function name (inlined frames expanded); default
  Line,      // by function, file and line
  Address,   // by return address (module + offset)
};

struct Query {
  Filter filter;
  // The window Metric::Live measures ("live bytes at T"); absent (no time
  // selection): Live is the Peak metric, the blocks live when the heap peaked.
  std::optional<TimeWindow> live_window;
  // A block freed by its own thread within this time of its allocation is "temporary".
  uint64_t temporary_ns = 10'000;
  Grouping grouping = Grouping::Function;
  // > 0: also record each stack's activity over at most this many equal time
  // buckets (their width a power of two of ns: series_width, aggregate.h).
  uint32_t series_buckets = 0;
};

// The user's words, before the trace is known (times like "30%" or "peak"
// need the duration and the peak, which the first pass finds).
struct TimeSpec {
  enum class Kind : uint8_t { Absolute, Percent, Peak, End };
  Kind kind = Kind::Absolute;
  double value = 0;  // ns for Absolute, 0..100 for Percent
};

struct QueryArgs {
  std::vector<std::string> at;       // --at T (one) / --between T1 T2 (two)
  bool at_peak = false;
  bool at_end = false;
  std::optional<WindowTest> test;    // --live / --allocated / --freed
  std::string min_size, max_size;    // "4KiB", "1M", "100"
  std::string min_lifetime, max_lifetime;  // "10us", "1.5s", "30%"
  std::optional<uint32_t> thread;
  std::vector<std::string> focus, hide;
  std::string temporary = "10us";
  std::string kind;                  // --kind: "all" (default), "heap", "mapped"
  Grouping grouping = Grouping::Function;
  uint32_t series_buckets = 0;
};

// "1.5s", "200ms", "30us", "100ns", "12" (seconds), "30%", "peak", "end", "start".
Expected<TimeSpec> parse_time(std::string_view text);
// "123", "4k", "4KiB", "1.5MB", "2G" (k/M/G are powers of 1024; "kB" and "KiB" alike).
Expected<uint64_t> parse_size(std::string_view text);
// A duration: like parse_time but not peak/end; percent of the trace duration.
uint64_t resolve_time(const TimeSpec& spec, const Overview& overview);

// True when resolving or applying the arguments needs the first pass's results
// (times, lifetimes); otherwise one pass over the trace does (the per-stack
// series too: their buckets widen as the trace goes on, aggregate.h).
bool needs_first_pass(const QueryArgs& args);

// Checks the arguments without a trace (bad numbers, --at with --between, ...).
std::optional<Error> validate(const QueryArgs& args);
// Resolves against the first pass: times become ns. Without needs_first_pass(),
// `overview` is not looked at.
Expected<Query> resolve(const QueryArgs& args, const Overview& overview);

}  // namespace memloupe::analysis
