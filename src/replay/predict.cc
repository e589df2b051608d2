#include "replay/predict.h"

#include <algorithm>

namespace memloupe::replay {

namespace {

constexpr double kMiB = 1024 * 1024;

// The recorder's resident memory in --all mode, apart from the two parts that
// grow: the 512 KiB staging ring, ~400 KiB of encoder state, the flush thread's
// stack, the module table, the dlopen'ed libunwind and the library's own pages.
// Measured: the recorded peak RSS against the native peak (VmHWM) of
// bench_alloc_mt and sqlite3, less their output ring and address table
// (docs/REPLAY.md § Prediction has the figures).
constexpr double kRecorderFixedBytes = 1.75 * kMiB;

// The output ring (src/recorder/trace_output.h, 4 MiB) is touched as far as
// the recorder has written chunks into it: about 4.2 raw bytes per --all event
// (docs/FORMAT.md § 9), until it wraps.
double output_ring_bytes(uint64_t events) { return std::min(4 * kMiB, 4.2 * static_cast<double>(events)); }

// The recorder's address table (src/recorder/address_table.h): 16-byte slots,
// a power of two of them (at least 4096), doubled when 70% full; the old table
// is still mapped while the new one fills, so its peak is 1.5 times the last.
double address_table_peak_bytes(uint64_t live_blocks) {
  uint64_t slots = 4096;
  while (live_blocks * 10 > slots * 7) slots *= 2;
  return static_cast<double>(slots * 16) * (slots > 4096 ? 1.5 : 1.0);
}

}  // namespace

uint64_t recorder_rss_at(uint64_t events, uint64_t max_live_blocks) {
  return static_cast<uint64_t>(kRecorderFixedBytes + output_ring_bytes(events) +
                               address_table_peak_bytes(max_live_blocks));
}

uint64_t recorder_rss_estimate(const TraceFacts& facts) {
  return recorder_rss_at(facts.alloc_calls + facts.free_calls + facts.realloc_calls, facts.max_live_blocks);
}

std::optional<double> non_heap_bytes(const TraceFacts& facts, const Measurements& glibc) {
  if (facts.recorded_peak_rss_bytes == 0) return std::nullopt;
  double rest = 0;
  if (!facts.rss_points.empty() && glibc.probe_rss.size() == facts.rss_points.size()) {
    // At the highest sample: the program's RSS there, less the recorder's and
    // less what glibc's replay held at the same point of the replay.
    size_t top = 0;
    for (size_t i = 1; i < facts.rss_points.size(); ++i) {
      if (facts.rss_points[i].rss_bytes > facts.rss_points[top].rss_bytes) top = i;
    }
    const RssPoint& p = facts.rss_points[top];
    rest = static_cast<double>(p.rss_bytes) - static_cast<double>(recorder_rss_at(p.events, p.max_live_blocks)) -
           (glibc.probe_rss[top] - glibc.baseline_rss_bytes);
  } else {
    // No probe to match: assume the sampled peak is the heap's peak.
    rest = static_cast<double>(facts.recorded_peak_rss_bytes) - static_cast<double>(recorder_rss_estimate(facts)) -
           (glibc.peak_rss_bytes - glibc.baseline_rss_bytes);
  }
  // Below zero the recorder's share is smaller than estimated: no figure is
  // better than a wrong one.
  if (rest < 0) return std::nullopt;
  return rest;
}

std::optional<double> predict_peak_rss(const TraceFacts& facts, const Measurements& glibc,
                                       const Measurements& allocator) {
  const std::optional<double> rest = non_heap_bytes(facts, glibc);
  if (!rest) return std::nullopt;
  // Over glibc's baseline, not the allocator's own: what an allocator sets up
  // before the first call (tcmalloc's and jemalloc's metadata) is memory the
  // program pays too.
  return *rest + allocator.peak_rss_bytes - glibc.baseline_rss_bytes;
}

}  // namespace memloupe::replay
