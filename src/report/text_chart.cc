#include "report/text_chart.h"

#include <algorithm>
#include <cmath>

#include "report/text_format.h"

namespace memloupe::report {
namespace {

// Slice c of `columns` covers [start(c), start(c+1)) of [0, duration].
uint64_t slice_start(uint64_t duration, size_t columns, size_t c) {
  return static_cast<uint64_t>(static_cast<long double>(duration) * c / columns);
}

size_t column_of(uint64_t t, uint64_t duration, size_t columns) {
  if (duration == 0) return 0;
  return std::min(columns - 1, static_cast<size_t>(static_cast<long double>(t) * columns / duration));
}

std::string pad_left(const std::string& s, size_t width) {
  const size_t w = display_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}

}  // namespace

std::vector<double> heap_columns(const analysis::Overview& o, size_t columns) {
  std::vector<double> out(columns, 0);
  const auto& points = o.heap.points;
  if (points.empty() || columns == 0) return out;
  const uint64_t duration = std::max<uint64_t>(o.duration_ns, 1);
  for (size_t c = 0; c < columns; ++c) {
    const uint64_t begin = slice_start(duration, columns, c);
    const uint64_t end = std::max(begin + 1, slice_start(duration, columns, c + 1));
    size_t first = std::min(points.size() - 1, static_cast<size_t>(begin / o.heap.bucket_ns));
    size_t last = std::min(points.size() - 1, static_cast<size_t>((end - 1) / o.heap.bucket_ns));
    double v = 0;
    for (size_t i = first; i <= last; ++i) v = std::max(v, points[i].live_max);
    out[c] = v;
  }
  // The exact peak lands in its column even if buckets were merged around it.
  const double peak = o.estimator.bytes_value(o.peak.live);
  double& at_peak = out[column_of(o.peak.time_ns, duration, columns)];
  at_peak = std::max(at_peak, peak);
  return out;
}

std::vector<std::optional<double>> rss_columns(const analysis::Overview& o, size_t columns) {
  std::vector<std::optional<double>> out(columns);
  const uint64_t duration = std::max<uint64_t>(o.duration_ns, 1);
  for (const format::RssSample& s : o.rss) {
    auto& v = out[column_of(s.time_ns, duration, columns)];
    v = std::max(v.value_or(0), static_cast<double>(s.rss_bytes));
  }
  for (size_t c = 1; c < columns; ++c) {
    if (!out[c] && out[c - 1] && o.rss.back().time_ns >= slice_start(duration, columns, c)) out[c] = out[c - 1];
  }
  return out;
}

std::string render_timeline_chart(const analysis::Overview& o, ChartSize size) {
  const size_t w = std::max<size_t>(size.width, 8), h = std::max<size_t>(size.height, 2);
  const std::vector<double> heap = heap_columns(o, w);
  const std::vector<std::optional<double>> rss = rss_columns(o, w);
  double top = 0;
  for (size_t c = 0; c < w; ++c) top = std::max({top, heap[c], rss[c].value_or(0)});
  if (top <= 0) top = 1;

  static constexpr const char* kEighths[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const std::string top_label = human_bytes(top), mid_label = human_bytes(top / 2);
  const size_t label_w = std::max({display_width(top_label), display_width(mid_label), size_t{1}});
  std::string out;
  for (size_t row = h; row-- > 0;) {
    std::string label = row == h - 1 ? top_label : row == (h - 1) / 2 && h > 2 ? mid_label : "";
    out += pad_left(label, label_w) + (label.empty() ? " │" : " ┤");
    for (size_t c = 0; c < w; ++c) {
      // Eighths of this cell covered by the bar.
      const double level = heap[c] / top * static_cast<double>(h) - static_cast<double>(row);
      const int eighths = static_cast<int>(std::clamp(std::round(level * 8), 0.0, 8.0));
      if (eighths == 0 && rss[c]) {
        // The top of the scale belongs to the top row.
        const double rss_row = std::min(*rss[c] / top * static_cast<double>(h), static_cast<double>(h) - 0.5);
        if (rss_row >= static_cast<double>(row) && rss_row < static_cast<double>(row + 1)) {
          out += "•";
          continue;
        }
      }
      out += kEighths[eighths];
    }
    while (out.back() == ' ') out.pop_back();
    out += '\n';
  }
  out += pad_left("0", label_w) + " └";
  for (size_t c = 0; c < w; ++c) out += "─";
  out += '\n';

  const std::string indent(label_w + 2, ' ');
  const uint64_t duration = std::max<uint64_t>(o.duration_ns, 1);
  if (o.peak.alloc) {
    const size_t pc = column_of(o.peak.time_ns, duration, w);
    out += indent + std::string(pc, ' ') + "▲ peak " + human_bytes(o.estimator.bytes_value(o.peak.live)) + " at " +
           human_duration(o.peak.time_ns) + '\n';
  }
  if (!o.markers.empty()) {
    std::string line(w, ' ');
    size_t shown = 0;
    for (const analysis::MarkerInfo& m : o.markers) {
      if (++shown > 9) break;
      line[column_of(m.time_ns, duration, w)] = static_cast<char>('0' + shown);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += indent + line + '\n';
  }
  const std::string end_label = human_duration(o.duration_ns);
  const size_t gap = w > end_label.size() + 3 ? w - display_width(end_label) - 3 : 1;
  out += indent + "0 s" + std::string(gap, ' ') + end_label + '\n';
  if (!o.rss.empty()) {
    out += indent + (o.estimator.exact() ? "█ live heap (exact)   • RSS\n" : "█ live heap (estimated)   • RSS\n");
  }
  size_t shown = 0;
  for (const analysis::MarkerInfo& m : o.markers) {
    if (++shown > 9) {
      out += indent + "… and " + std::to_string(o.markers.size() - 9) + " more markers (see --csv)\n";
      break;
    }
    out += indent + std::to_string(shown) + " " + m.name + " at " + human_duration(m.time_ns) + '\n';
  }
  return out;
}

}  // namespace memloupe::report
