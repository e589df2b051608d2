// `memloupe summary`: the trace at a glance (issue 3's summary).
#include <algorithm>

#include "analysis/sites.h"
#include "format/attach_marker.h"
#include "report/html_json.h"
#include "report/text_format.h"
#include "report/text_mapped.h"
#include "report/text_sites.h"
#include "report/text_views.h"

namespace memloupe::report {
namespace {

std::string call_totals(const analysis::Overview& o) {
  if (!o.call_totals) return "Calls        none recorded (the trace has no call counters)\n";
  TextTable t;
  t.add_column("function", TextTable::Align::Left);
  t.add_column("calls", TextTable::Align::Right);
  t.add_column("bytes requested", TextTable::Align::Right);
  uint64_t calls = 0, bytes = 0;
  for (unsigned i = 0; i < format::kFuncCount; ++i) {
    const format::FuncTotal& ft = o.call_totals->totals[i];
    if (ft.calls == 0) continue;
    const auto func = static_cast<format::Func>(i);
    const bool allocates = format::func_allocates(func);
    t.add_row({Cell{std::string(format::func_name(func))}, Cell{human_count(static_cast<double>(ft.calls))},
               Cell{allocates ? human_bytes(static_cast<double>(ft.bytes)) : ""}});
    if (allocates) {
      calls += ft.calls;
      bytes += ft.bytes;
    }
  }
  // The counters are written at each flush and at exit: a trace without an end
  // (SIGKILL) has events recorded after its last counters, which they miss.
  const bool lag = !o.end_reason && o.call_totals->time_ns < o.duration_ns;
  const std::string title =
      lag ? "Calls (exact as of " + human_duration(o.call_totals->time_ns) +
                ", the recorder's last count; the events go on to " + human_duration(o.duration_ns) +
                ": the program ended without a final count, so later calls are in the events only)\n"
          : "Calls (exact, from the recorder's counters)\n";
  return title + t.render() + "Total        " +
         human_count(static_cast<double>(calls)) + " allocating calls, " + human_bytes(static_cast<double>(bytes)) +
         " requested\n";
}

// Per thread, when there is more than one: who allocates, who leaks.
std::string thread_table(const analysis::Model& m, size_t width) {
  if (m.aggregate.threads.size() < 2) return {};
  const analysis::Estimator& e = m.aggregate.estimator;
  TextTable t;
  t.add_column("thread", TextTable::Align::Right);
  t.add_column("allocated", TextTable::Align::Right);
  t.add_column("blocks", TextTable::Align::Right);
  t.add_column("at peak", TextTable::Align::Right);
  t.add_column("leaked", TextTable::Align::Right);
  t.add_column("name", TextTable::Align::Left);
  for (const analysis::ThreadStats& ts : m.aggregate.threads) {
    const uint32_t id = ts.thread.value;
    const std::string name = id < m.overview.threads.size() ? m.overview.threads[id].name : "";
    t.add_row({Cell{std::to_string(id)}, Cell{bytes_estimate(e.bytes(ts.metrics[analysis::Metric::Allocated]), e.exact())},
               Cell{count_estimate(e.objects(ts.metrics[analysis::Metric::Allocated]), e.exact())},
               Cell{bytes_estimate(e.bytes(ts.metrics[analysis::Metric::Peak]), e.exact())},
               Cell{bytes_estimate(e.bytes(ts.metrics[analysis::Metric::Leaked]), e.exact())}, Cell{name}});
  }
  return "\nBy thread\n" + t.render(width);
}

// Allocated, peak and leaked, bytes and blocks with their intervals: what
// `summary --csv` prints, and the "figures" of `summary --json`.
TextTable figures_table(const analysis::Model& m) {
  const analysis::Overview& o = m.overview;
  const analysis::Estimator& e = o.estimator;
  TextTable t;
  t.add_column("measure", TextTable::Align::Left);
  t.add_column("bytes", TextTable::Align::Right, estimate_csv_headers("bytes"));
  t.add_column("blocks", TextTable::Align::Right, estimate_csv_headers("blocks"));
  t.add_column("time", TextTable::Align::Right, {"time_ns"});
  auto row = [&](const char* name, const analysis::Count& c, std::string time) {
    t.add_row({Cell{name}, bytes_cell(e, c), objects_cell(e, c), Cell{time}});
  };
  row("allocated", m.aggregate.totals[analysis::Metric::Allocated], "");
  if (o.peak.alloc) row("peak", o.peak.live, std::to_string(o.peak.time_ns));
  row("leaked", m.aggregate.totals[analysis::Metric::Leaked], std::to_string(o.duration_ns));
  return t;
}

std::string summary_json(const analysis::Model& m, const TextTable& by_allocated, const TextTable& by_leaked) {
  const analysis::Overview& o = m.overview;
  std::string argv;
  for (const std::string& a : o.info.argv) argv += (argv.empty() ? "" : " ") + a;
  JsonWriter json;
  json.begin_object();
  json.key("command").string(argv.empty() ? o.info.executable : argv);
  json.key("pid").integer(o.info.pid);
  json.key("start_wall_ns").integer(o.info.start_wall_ns);
  json.key("mode").string(o.estimator.exact() ? "all" : "sampled");
  json.key("bytes_per_sample").integer(o.estimator.exact() ? 0 : o.info.bytes_per_sample);
  json.key("duration_ns").integer(o.duration_ns);
  json.key("events").integer(o.events);
  json.key("threads").integer(o.threads.size());
  json.key("ended").boolean(o.end_reason.has_value());
  if (o.peak_rss) json.key("peak_rss_bytes").integer(o.peak_rss);
  json.key("figures").raw(figures_table(m).json());
  json.key("sites_by_allocated").raw(by_allocated.json());
  json.key("sites_by_leaked").raw(by_leaked.json());
  json.end_object();
  return json.take() + "\n";
}

}  // namespace

std::string render_summary(const analysis::Model& m, const SummaryOptions& options) {
  const analysis::Overview& o = m.overview;
  const analysis::Estimator& e = o.estimator;
  if (options.csv) return figures_table(m).csv();
  if (options.json) {
    const std::vector<analysis::Site> sites = analysis::collect_sites(m.tree, 0);
    SiteTableOptions t;
    t.limit = options.top;
    t.frames = options.frames;
    t.all_frames = options.all_frames;
    t.full_names = true;
    t.key = {analysis::Metric::Allocated, false};
    const TextTable by_allocated = site_table(m, sites, t);
    t.key = {analysis::Metric::Leaked, false};
    return summary_json(m, by_allocated, site_table(m, sites, t));
  }
  std::string out = describe_trace(m) + describe_selection(m) + '\n' + call_totals(o) + '\n';

  const analysis::Count& allocated = m.aggregate.totals[analysis::Metric::Allocated];
  const analysis::Count& leaked = m.aggregate.totals[analysis::Metric::Leaked];
  out += "Allocated    " + bytes_estimate(e.bytes(allocated), e.exact()) + " in " +
         count_estimate(e.objects(allocated), e.exact()) + " blocks\n";
  if (o.peak.alloc) {
    out += "Peak heap    " + bytes_estimate(e.bytes(o.peak.live), e.exact()) + " at " +
           human_duration(o.peak.time_ns) + " (live blocks: " + count_estimate(e.objects(o.peak.live), e.exact()) +
           ")\n";
  }
  out += "Leaked       " + bytes_estimate(e.bytes(leaked), e.exact()) + " in " +
         count_estimate(e.objects(leaked), e.exact()) + " blocks (live at " +
         (o.end_reason && *o.end_reason != format::EndReason::Stopped ? "exit" : "the end of the trace") + ")\n";
  const auto attached = std::find_if(o.markers.begin(), o.markers.end(),
                                     [](const analysis::MarkerInfo& k) { return k.name == format::kAttachMarker; });
  if (attached != o.markers.end()) {
    out += "Note         recorded by `memloupe attach` from " + human_duration(attached->time_ns) +
           ": blocks allocated before it are unknown (their frees are ignored); leaks and lifetimes count only "
           "blocks allocated after it; a realloc of a block from before it counts as a new allocation of its new "
           "size\n";
  }
  if (o.peak_rss) out += "Peak RSS     " + human_bytes(static_cast<double>(o.peak_rss)) + "\n";
  out += mapped_lines(o);
  if (o.unmatched_frees) {
    out += "Note         " + human_count(static_cast<double>(o.unmatched_frees)) +
           " frees named blocks the trace never allocated\n";
  }

  out += thread_table(m, options.width);

  const std::vector<analysis::Site> sites = analysis::collect_sites(m.tree, 0);
  SiteTableOptions t;
  t.limit = options.top;
  t.frames = options.frames;
  t.all_frames = options.all_frames;
  t.full_names = options.full_names;
  t.key = {analysis::Metric::Allocated, false};
  out += "\nTop " + std::to_string(options.top) + " sites by allocated bytes\n" + site_table(m, sites, t).render(options.width);
  t.key = {analysis::Metric::Leaked, false};
  const TextTable leaks = site_table(m, sites, t);
  out += "\nTop " + std::to_string(options.top) + " sites by leaked bytes\n" +
         (leaks.rows() ? leaks.render(options.width) : "(nothing leaked)\n");
  return out;
}

}  // namespace memloupe::report
