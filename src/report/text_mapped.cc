#include "report/text_mapped.h"

#include <algorithm>
#include <cstdio>

#include "report/text_format.h"

namespace memloupe::report {

std::string mapped_lines(const analysis::Overview& o) {
  const analysis::MappedMemory& m = o.mapped;
  if (!m.any()) return {};
  const analysis::Estimator& e = o.estimator;
  std::string out = "Mapped       " + bytes_estimate(e.bytes(m.peak), e.exact()) + " at its peak (" +
                    human_duration(m.peak_ns) + "), " + bytes_estimate(e.bytes(m.leaked), e.exact()) +
                    " still mapped at the end (anonymous mmap/mremap/sbrk, outside the heap)\n";
  out += "Heap+mapped  " + human_bytes(m.combined_peak_bytes) + " at its peak (" +
         human_duration(m.combined_peak_ns) + ")";
  if (o.peak_rss) {
    const double share = m.combined_peak_bytes / static_cast<double>(o.peak_rss) * 100;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f%%", share);
    out += std::string(", ") + buf + " of peak RSS";
  }
  return out + '\n';
}

double series_at(const analysis::Timeline& series, uint64_t t) {
  if (series.points.empty()) return 0;
  const size_t i = std::min<uint64_t>(t / series.bucket_ns, series.points.size() - 1);
  return series.points[i].live_end;
}

}  // namespace memloupe::report
