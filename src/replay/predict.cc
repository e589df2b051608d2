#include "replay/predict.h"

#include <algorithm>

namespace memloupe::replay {

uint64_t recorder_rss_estimate(const TraceFacts& facts) {
  (void)facts;
  return 0;
}

std::optional<double> non_heap_bytes(const TraceFacts& facts, const Measurements& glibc) {
  if (facts.recorded_peak_rss_bytes == 0) return std::nullopt;
  const double heap = glibc.peak_rss_bytes - glibc.baseline_rss_bytes;
  return static_cast<double>(facts.recorded_peak_rss_bytes) - static_cast<double>(recorder_rss_estimate(facts)) -
         heap;
}

std::optional<double> predict_peak_rss(const TraceFacts& facts, const Measurements& glibc,
                                       const Measurements& allocator) {
  const std::optional<double> rest = non_heap_bytes(facts, glibc);
  if (!rest) return std::nullopt;
  return std::max(0.0, *rest + allocator.peak_rss_bytes - allocator.baseline_rss_bytes);
}

}  // namespace memloupe::replay
