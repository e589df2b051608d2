// `memloupe top`: allocation sites ranked by a metric; --callers / --callees.
#include "report/text_format.h"
#include "report/text_sites.h"
#include "report/text_views.h"

namespace memloupe::report {
namespace {

std::string heading(const analysis::Model& m, const std::string& title) {
  return describe_selection(m) + title + '\n';
}

}  // namespace

std::string render_top(const analysis::Model& m, const TopOptions& o) {
  SiteTableOptions t{o.key, o.limit, o.frames, o.min_count, o.full_names, o.all_frames};
  const TextTable table = site_table(m, analysis::collect_sites(m.tree, o.depth), t);
  if (o.csv) return table.csv();
  if (o.json) return table.json() + "\n";
  std::string title = "Sites by " + key_title(o.key);
  if (o.key.metric == analysis::Metric::Live) {
    const std::optional<analysis::TimeWindow>& w = m.aggregate.query.live_window;
    title += !w ? " at the peak" : w->instant() ? " at " + human_duration(w->begin_ns) : " in the selected window";
  }
  if (o.depth) title += ", grouped by the innermost " + std::to_string(o.depth) + " frame(s)";
  return heading(m, title) + (table.rows() ? table.render(o.width) : "(no allocations match)\n");
}

std::string render_neighbours(const analysis::Model& m, const std::string& function, bool callers,
                              const TopOptions& o) {
  const analysis::Neighbours n = analysis::neighbours_of(m.tree, function);
  const analysis::Estimator& e = m.aggregate.estimator;
  std::vector<analysis::Neighbour> rows = callers ? n.callers : n.callees;
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    return analysis::sort_value(a.metrics, o.key, e) > analysis::sort_value(b.metrics, o.key, e);
  });
  const double total = analysis::sort_value(n.total, o.key, e);
  const std::string name(analysis::metric_name(o.key.metric));
  TextTable t;
  t.add_column(name, TextTable::Align::Right, estimate_csv_headers(name + "_bytes"));
  t.add_column("blocks", TextTable::Align::Right, estimate_csv_headers(name + "_blocks"));
  t.add_column("share", TextTable::Align::Right, {"share_percent"});
  t.add_column(callers ? "caller" : "callee", TextTable::Align::Left, {callers ? "caller" : "callee"});
  size_t shown = 0;
  for (const analysis::Neighbour& r : rows) {
    const analysis::Count& c = r.metrics[o.key.metric];
    if (c.empty() || e.objects_value(c) < o.min_count) continue;
    if (o.limit && shown++ == o.limit) break;
    const double value = analysis::sort_value(r.metrics, o.key, e);
    std::string who = r.frame ? frame_label(m.tree.frame(*r.frame), o.full_names)
                              : callers ? "(the outermost frame: no caller)" : "(allocates itself)";
    t.add_row({bytes_cell(e, c), objects_cell(e, c),
               Cell{human_percent(value, total), {csv_percent(value, total)}},
               Cell{who, {r.frame ? m.tree.frame(*r.frame).function : ""}}});
  }
  if (o.csv) return t.csv();
  if (o.json) return t.json() + "\n";
  if (n.matched.empty()) return "No function matching '" + function + "' in the selected stacks.\n";
  std::string matched;
  for (size_t i = 0; i < n.matched.size() && i < 5; ++i) {
    matched += (i ? ", " : "") + function_label(m.tree.frame(n.matched[i]).function, o.full_names);
  }
  if (n.matched.size() > 5) matched += ", … (" + std::to_string(n.matched.size()) + " functions)";
  return heading(m, std::string(callers ? "Callers" : "Callees") + " of " + matched + ", by " + key_title(o.key) +
                        " (total " + bytes_estimate(e.bytes(n.total[o.key.metric]), e.exact()) + ")") +
         t.render(o.width);
}

}  // namespace memloupe::report
