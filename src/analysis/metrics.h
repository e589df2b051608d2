// What the analysis counts about a set of allocations (Metric, Metrics), and
// the ids its tables use. Every Count is a sum over sampled blocks; turn it
// into bytes/objects with the Estimator (estimate.h).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "analysis/estimate.h"
#include "format/events.h"

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

}  // namespace memloupe::analysis
