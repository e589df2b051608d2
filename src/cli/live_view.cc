#include "cli/live_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/sites.h"
#include "report/text_format.h"
#include "report/text_sites.h"

namespace memloupe::cli {
namespace {

std::vector<uint8_t> hex_bytes(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string fit(std::string s, size_t width) {
  // Counts bytes: names are ASCII, the few box characters are kept out of cut text.
  if (s.size() > width) s = s.substr(0, width > 1 ? width - 1 : 0) + "…";
  return s;
}

std::string signed_bytes(double b) {
  if (std::abs(b) < 0.5) return "0";
  return (b > 0 ? "+" : "-") + report::human_bytes(std::abs(b));
}

}  // namespace

std::string_view live_sort_name(LiveSort s) {
  switch (s) {
    case LiveSort::Live: return "live bytes";
    case LiveSort::Change: return "change";
    case LiveSort::Allocated: return "allocated bytes";
  }
  return "";
}

std::string LiveNamer::name(const analysis::Overview& overview, const analysis::Frame& frame) {
  if (frame.symbolized || frame.address == 0) return frame.function;
  if (auto it = cache_.find(frame.address); it != cache_.end()) return it->second;
  std::string result = frame.function;
  for (const analysis::ModuleInfo& m : overview.modules) {
    if (frame.address < m.start || frame.address >= m.end) continue;
    const symbolize::Module module{m.path, hex_bytes(m.build_id), m.start, m.end, m.load_bias};
    const auto frames = symbolizer_.symbolize(module, frame.address);
    if (!frames.empty() && !frames.front().function.empty()) {
      const auto& f = frames.front();
      result = report::function_label(f.function, false);
      if (!f.file.empty()) result += fmt::format("  {}:{}", f.file.substr(f.file.rfind('/') + 1), f.line);
    }
    break;
  }
  cache_.emplace(frame.address, result);
  return result;
}

LiveState live_state(const analysis::Model& model, std::map<std::string, double>& previous, LiveNamer& namer) {
  const analysis::Overview& o = model.overview;
  const analysis::Estimator& e = o.estimator;
  LiveState s;
  s.command = o.info.executable;
  s.pid = o.info.pid;
  s.time_ns = o.duration_ns;
  s.ended = o.end_reason.has_value();
  for (const analysis::HeapPoint& p : o.heap.points) s.heap_series.push_back(p.live_end);
  if (!s.heap_series.empty()) s.heap = s.heap_series.back();
  for (const format::RssSample& r : o.rss) s.rss_series.push_back(static_cast<double>(r.rss_bytes));
  if (!s.rss_series.empty()) s.rss = s.rss_series.back();

  std::map<std::string, double> now;
  for (const analysis::Site& site : analysis::collect_sites(model.tree, 1)) {
    LiveSite l;
    if (!site.frames.empty()) {
      const analysis::Frame& f = model.tree.frame(site.frames.front());
      l.key = f.key;
      l.name = namer.name(o, f);
    } else {
      l.key = l.name = "(no frames)";
    }
    l.live = e.bytes_value(site.metrics[analysis::Metric::Leaked]);
    l.allocated = e.bytes_value(site.metrics[analysis::Metric::Allocated]);
    const auto before = previous.find(l.key);
    l.change = l.live - (before == previous.end() ? 0 : before->second);
    now[l.key] += l.live;
    s.sites.push_back(std::move(l));
  }
  previous = std::move(now);
  for (const analysis::ThreadStats& t : model.aggregate.threads) {
    LiveThread l;
    l.id = t.thread.value;
    if (t.thread.value < o.threads.size()) l.name = o.threads[t.thread.value].name;
    l.live = e.bytes_value(t.metrics[analysis::Metric::Leaked]);
    l.allocated = e.bytes_value(t.metrics[analysis::Metric::Allocated]);
    s.threads.push_back(std::move(l));
  }
  return s;
}

std::string sparkline(std::span<const double> values, size_t width) {
  static constexpr const char* kBars[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  if (values.size() > width) values = values.subspan(values.size() - width);
  const double top = values.empty() ? 0 : *std::max_element(values.begin(), values.end());
  std::string out;
  for (double v : values) out += kBars[top > 0 ? std::min<size_t>(7, static_cast<size_t>(v / top * 7.999)) : 0];
  return out;
}

std::string render_live_screen(const LiveState& s, const LiveScreen& screen) {
  const size_t width = static_cast<size_t>(std::max(screen.width, 40));
  std::string out = fit(fmt::format("memloupe live — pid {} {} — {}{}", s.pid, s.command,
                                    report::human_duration(s.time_ns), s.ended ? " (trace ended)" : ""),
                        width) + "\n\n";
  const size_t spark = width - 24;
  out += fmt::format("heap {:>10}  {}\n", report::human_bytes(s.heap), sparkline(s.heap_series, spark));
  out += fmt::format("rss  {:>10}  {}\n\n", report::human_bytes(s.rss), sparkline(s.rss_series, spark));

  std::vector<LiveSite> sites = s.sites;
  const auto value = [&](const LiveSite& l) {
    switch (screen.sort) {
      case LiveSort::Change: return std::abs(l.change);
      case LiveSort::Allocated: return l.allocated;
      case LiveSort::Live: break;
    }
    return l.live;
  };
  std::stable_sort(sites.begin(), sites.end(), [&](const LiveSite& a, const LiveSite& b) { return value(a) > value(b); });
  const int rows = std::max(3, screen.height - 10 - static_cast<int>(std::min<size_t>(s.threads.size(), 6)));
  out += fmt::format("top sites by {}{}\n", live_sort_name(screen.sort),
                     screen.thread ? fmt::format(" in thread {}", *screen.thread) : std::string(" in all threads"));
  out += fmt::format("{:>10} {:>10} {:>10}  site\n", "live", "change", "allocated");
  for (size_t i = 0; i < sites.size() && i < static_cast<size_t>(rows); ++i) {
    const LiveSite& l = sites[i];
    out += fmt::format("{:>10} {:>10} {:>10}  {}\n", report::human_bytes(l.live), signed_bytes(l.change),
                       report::human_bytes(l.allocated), fit(l.name, width - 34));
  }
  out += fmt::format("\nthreads ({})\n", s.threads.size());
  for (size_t i = 0; i < s.threads.size() && i < 6; ++i) {
    const LiveThread& t = s.threads[i];
    out += fmt::format("{:>4} {:<16} live {:>10}  allocated {:>10}\n", t.id, fit(t.name, 16), report::human_bytes(t.live),
                       report::human_bytes(t.allocated));
  }
  out += "\nkeys: s sort (live, change, allocated)  t next thread  a all threads  q quit\n";
  return out;
}

std::string render_live_line(const LiveState& s) {
  std::string top = "-";
  const auto best = std::max_element(s.sites.begin(), s.sites.end(),
                                     [](const LiveSite& a, const LiveSite& b) { return a.live < b.live; });
  if (best != s.sites.end())
    top = fmt::format("{} ({}, {})", best->name, report::human_bytes(best->live), signed_bytes(best->change));
  return fmt::format("{} heap {} rss {} threads {} top {}{}\n", report::human_duration(s.time_ns),
                     report::human_bytes(s.heap), report::human_bytes(s.rss), s.threads.size(), top,
                     s.ended ? " (trace ended)" : "");
}

}  // namespace memloupe::cli
