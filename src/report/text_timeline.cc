// `memloupe timeline`: the estimated live heap and RSS over time.
#include <algorithm>
#include <cstdio>

#include "report/html_json.h"
#include "report/text_format.h"
#include "report/text_mapped.h"
#include "report/text_table.h"
#include "report/text_views.h"

namespace memloupe::report {

std::string render_timeline(const analysis::Model& m, ChartSize size) {
  const analysis::Overview& o = m.overview;
  const analysis::Estimator& e = o.estimator;
  std::string out = "Live heap over " + human_duration(o.duration_ns);
  out += e.exact() ? " (exact)\n" : " (estimated from samples)\n";
  out += render_timeline_chart(o, size);
  if (o.peak.alloc) {
    out += "\nPeak heap    " + bytes_estimate(e.bytes(o.peak.live), e.exact()) + " at " +
           human_duration(o.peak.time_ns) + '\n';
  }
  if (o.peak_rss) out += "Peak RSS     " + human_bytes(static_cast<double>(o.peak_rss)) + '\n';
  out += "At the end   " + bytes_estimate(e.bytes(o.leaked), e.exact()) + " live\n";
  return out + mapped_lines(o);
}

std::string timeline_csv(const analysis::Model& m) {
  const analysis::Overview& o = m.overview;
  // A trace with mapped memory gets one more column, its live total (text_mapped.h).
  const bool mapped = o.mapped.any();
  std::string out = "time_ns,live_bytes,live_max_bytes,live_min_bytes,allocated_bytes,freed_bytes,rss_bytes,markers";
  out += mapped ? ",mapped_bytes\n" : "\n";
  size_t rss_i = 0, marker_i = 0;
  std::optional<uint64_t> rss;
  char buf[256];
  for (size_t i = 0; i < o.heap.points.size(); ++i) {
    const analysis::HeapPoint& p = o.heap.points[i];
    const uint64_t begin = i * o.heap.bucket_ns, end = begin + o.heap.bucket_ns;
    while (rss_i < o.rss.size() && o.rss[rss_i].time_ns < end) rss = o.rss[rss_i++].rss_bytes;
    std::string markers;
    while (marker_i < o.markers.size() && o.markers[marker_i].time_ns < end) {
      markers += (markers.empty() ? "" : ";") + o.markers[marker_i++].name;
    }
    std::snprintf(buf, sizeof buf, "%llu,%.0f,%.0f,%.0f,%.0f,%.0f,", static_cast<unsigned long long>(begin),
                  p.live_end, p.live_max, p.live_min, p.allocated, p.freed);
    out += buf;
    if (rss) out += std::to_string(*rss);
    out += ',' + csv_field(markers);
    if (mapped) {
      std::snprintf(buf, sizeof buf, ",%.0f", series_at(o.mapped.series, begin));
      out += buf;
    }
    out += '\n';
  }
  return out;
}

std::string timeline_json(const analysis::Model& m) {
  const analysis::Overview& o = m.overview;
  JsonWriter json;
  json.begin_object();
  json.key("mode").string(o.estimator.exact() ? "all" : "sampled");
  json.key("bucket_ns").integer(o.heap.bucket_ns);
  json.key("buckets").begin_array();
  for (size_t i = 0; i < o.heap.points.size(); ++i) {
    const analysis::HeapPoint& p = o.heap.points[i];
    json.begin_object().key("time_ns").integer(i * o.heap.bucket_ns);
    json.key("live_bytes").number(p.live_end).key("live_max_bytes").number(p.live_max);
    json.key("live_min_bytes").number(p.live_min).key("allocated_bytes").number(p.allocated);
    json.key("freed_bytes").number(p.freed).end_object();
  }
  json.end_array();
  json.key("rss").begin_array();
  for (const format::RssSample& r : o.rss) json.begin_array().integer(r.time_ns).integer(r.rss_bytes).end_array();
  json.end_array();
  if (o.peak.alloc) {
    json.key("peak").begin_object().key("time_ns").integer(o.peak.time_ns);
    json.key("bytes").number(o.estimator.bytes_value(o.peak.live)).end_object();
  }
  json.key("markers").begin_array();
  for (const analysis::MarkerInfo& mk : o.markers) {
    json.begin_object().key("time_ns").integer(mk.time_ns).key("name").string(mk.name).end_object();
  }
  json.end_array();
  json.end_object();
  return json.take() + "\n";
}

}  // namespace memloupe::report
