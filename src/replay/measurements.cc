#include "replay/measurements.h"

#include <algorithm>
#include <sstream>

namespace memloupe::replay {

const std::vector<Field> kFields = {
    {"threads", &Measurements::threads},
    {"alloc_calls", &Measurements::alloc_calls},
    {"free_calls", &Measurements::free_calls},
    {"failed_calls", &Measurements::failed_calls},
    {"waits", &Measurements::waits},
    {"order_violations", &Measurements::order_violations},
    {"wall_s", &Measurements::wall_s},
    {"cpu_s", &Measurements::cpu_s},
    {"alloc_time_s", &Measurements::alloc_time_s},
    {"clock_overhead_ns", &Measurements::clock_overhead_ns},
    {"baseline_rss_bytes", &Measurements::baseline_rss_bytes},
    {"peak_rss_bytes", &Measurements::peak_rss_bytes},
    {"final_rss_bytes", &Measurements::final_rss_bytes},
    {"minor_faults", &Measurements::minor_faults},
};

Expected<Measurements> parse_measurements(const std::string& text) {
  Measurements m;
  std::vector<bool> seen(kFields.size(), false);
  std::istringstream in(text);
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "probe_rss") {
      size_t index = 0;
      if (!(in >> index >> value) || index != m.probe_rss.size()) return Error{"the replayer's probes are out of order"};
      m.probe_rss.push_back(value);
      continue;
    }
    if (!(in >> value)) break;
    for (size_t i = 0; i < kFields.size(); ++i) {
      if (key == kFields[i].name) {
        m.*kFields[i].member = value;
        seen[i] = true;
      }
    }
  }
  for (size_t i = 0; i < kFields.size(); ++i) {
    if (!seen[i]) return Error{std::string("the replayer's output lacks ") + kFields[i].name};
  }
  return m;
}

namespace {

template <class Reduce>
Measurements per_field(const std::vector<Measurements>& runs, Reduce reduce) {
  Measurements out;
  if (runs.empty()) return out;
  for (const Field& f : kFields) {
    std::vector<double> v;
    for (const Measurements& r : runs) v.push_back(r.*f.member);
    std::sort(v.begin(), v.end());
    out.*f.member = reduce(v);
  }
  // The probes, index by index, when every run has them all.
  for (size_t i = 0; i < runs.front().probe_rss.size(); ++i) {
    std::vector<double> v;
    for (const Measurements& r : runs) {
      if (r.probe_rss.size() == runs.front().probe_rss.size()) v.push_back(r.probe_rss[i]);
    }
    std::sort(v.begin(), v.end());
    out.probe_rss.push_back(reduce(v));
  }
  return out;
}

double median_of_sorted(const std::vector<double>& v) {
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

Measurements median(const std::vector<Measurements>& runs) { return per_field(runs, median_of_sorted); }

Measurements spread(const std::vector<Measurements>& runs) {
  return per_field(runs, [](const std::vector<double>& v) {
    const double m = median_of_sorted(v);
    return m == 0 ? 0.0 : (v.back() - v.front()) / m;
  });
}

}  // namespace memloupe::replay
