// `memloupe diff A B`: sites that grew or shrank from trace A to trace B.
#include <algorithm>
#include <cmath>

#include "analysis/diff.h"
#include "report/text_format.h"
#include "report/text_sites.h"
#include "report/text_table.h"
#include "report/text_views.h"

namespace memloupe::report {
namespace {

std::string signed_bytes(const analysis::Estimate& d, bool exact) {
  const std::string sign = d.value > 0 ? "+" : d.value < 0 ? "−" : "";
  if (exact) return sign + human_bytes(std::fabs(d.value));
  return sign + human_bytes(std::fabs(d.value)) + " [" + (d.lo < 0 ? "−" : "+") + human_bytes(std::fabs(d.lo)) + ", " +
         (d.hi < 0 ? "−" : "+") + human_bytes(std::fabs(d.hi)) + "]";
}

std::string signed_count(const analysis::Estimate& d, bool exact) {
  const std::string sign = d.value > 0 ? "+" : d.value < 0 ? "−" : "";
  if (exact) return sign + human_count(std::fabs(d.value));
  if (!d.bounded) return sign + short_count(std::fabs(d.value)) + " [?, ?]";
  return sign + short_count(std::fabs(d.value)) + " [" + (d.lo < 0 ? "−" : "+") + short_count(std::fabs(d.lo)) +
         ", " + (d.hi < 0 ? "−" : "+") + short_count(std::fabs(d.hi)) + "]";
}

}  // namespace

std::string render_diff(const analysis::Model& a, const analysis::Model& b, const DiffOptions& o) {
  const analysis::Estimator& ea = a.aggregate.estimator;
  const analysis::Estimator& eb = b.aggregate.estimator;
  const bool exact = ea.exact() && eb.exact();
  const analysis::Metric metric = o.key.metric;
  struct Row {
    analysis::DiffRow row;
    analysis::Estimate bytes, objects;
  };
  std::vector<Row> rows;
  for (analysis::DiffRow& r : analysis::diff_sites(a, b, o.depth)) {
    const analysis::Estimate bytes = analysis::difference(ea.bytes(r.a[metric]), eb.bytes(r.b[metric]));
    const analysis::Estimate objects = analysis::difference(ea.objects(r.a[metric]), eb.objects(r.b[metric]));
    if ((o.key.by_objects ? objects.value : bytes.value) == 0) continue;
    if (ea.objects_value(r.a[metric]) < o.min_count && eb.objects_value(r.b[metric]) < o.min_count) continue;
    rows.push_back(Row{std::move(r), bytes, objects});
  }
  std::stable_sort(rows.begin(), rows.end(), [&](const Row& x, const Row& y) {
    return o.key.by_objects ? std::fabs(x.objects.value) > std::fabs(y.objects.value)
                            : std::fabs(x.bytes.value) > std::fabs(y.bytes.value);
  });
  const std::string name(analysis::metric_name(metric));
  TextTable t;
  t.add_column("A", TextTable::Align::Right, estimate_csv_headers("a_" + name + "_bytes"));
  t.add_column("B", TextTable::Align::Right, estimate_csv_headers("b_" + name + "_bytes"));
  t.add_column("change", TextTable::Align::Right, estimate_csv_headers("change_bytes"));
  t.add_column("blocks", TextTable::Align::Right, estimate_csv_headers("change_blocks"));
  t.add_column("site", TextTable::Align::Left, {"stack_innermost_first"});
  size_t shown = 0;
  for (const Row& r : rows) {
    if (o.limit && shown++ == o.limit) break;
    std::string stack;
    for (const std::string& f : r.row.frames) stack += (stack.empty() ? "" : ";") + f;
    std::vector<std::string> labels;
    for (const std::string& f : r.row.frames) labels.push_back(function_label(f, o.full_names));
    StackLines lines = stack_lines(labels, r.row.own, o.frames, o.all_frames);
    t.add_row({bytes_cell(ea, r.row.a[metric]), bytes_cell(eb, r.row.b[metric]),
               Cell{signed_bytes(r.bytes, exact), {csv_number(r.bytes.value), csv_number(r.bytes.lo), csv_number(r.bytes.hi)}},
               Cell{signed_count(r.objects, exact), {csv_number(r.objects.value), r.objects.bounded ? csv_number(r.objects.lo) : "",
                                                     r.objects.bounded ? csv_number(r.objects.hi) : ""}},
               Cell{lines.leaf, {stack}}},
              std::move(lines.notes));
  }
  if (o.csv) return t.csv();
  if (o.json) return t.json() + "\n";
  const analysis::Estimate total = analysis::difference(ea.bytes(a.aggregate.totals[metric]),
                                                         eb.bytes(b.aggregate.totals[metric]));
  std::string out = "Change in " + key_title(o.key) + " from A to B: " + signed_bytes(total, exact) + "\n";
  if (!exact) out += "(intervals: approximate 95%, from both traces' sampling error)\n";
  return out + (t.rows() ? t.render(o.width) : "(no site changed)\n");
}

}  // namespace memloupe::report
