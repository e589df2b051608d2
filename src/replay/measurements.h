// What one replayer run measured (its `key value` lines), and the medians of
// repeated runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/expected.h"

namespace memloupe::replay {

struct Measurements {
  double threads = 0;
  double alloc_calls = 0;
  double free_calls = 0;
  double failed_calls = 0;     // allocations the allocator refused
  double waits = 0;            // cross-thread waits that found the other thread behind
  double order_violations = 0; // frees that found no block, allocations that found one (must be 0)
  double wall_s = 0;
  double cpu_s = 0;
  double alloc_time_s = 0;     // summed inside allocator calls
  double clock_overhead_ns = 0;
  double baseline_rss_bytes = 0;  // the replayer before its first call
  double peak_rss_bytes = 0;      // VmHWM
  double final_rss_bytes = 0;     // after the last call (blocks the program never freed stay)
  double minor_faults = 0;
  std::vector<double> probe_rss;  // the replayer's RSS at each Probe op (TraceFacts::rss_points)
};

// One field of Measurements, by the name the replayer prints and --json uses.
struct Field {
  const char* name;
  double Measurements::*member;
};
extern const std::vector<Field> kFields;

// Parses the replayer's output; every field must be there.
Expected<Measurements> parse_measurements(const std::string& text);

// Per field: the median of `runs` (the mean of the two middle ones for an even count).
Measurements median(const std::vector<Measurements>& runs);
// Per field: (max - min) / median, 0 where the median is 0.
Measurements spread(const std::vector<Measurements>& runs);

}  // namespace memloupe::replay
