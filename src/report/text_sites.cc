#include "report/text_sites.h"

#include "analysis/frame_names.h"
#include "report/frame_names.h"
#include "report/text_format.h"

namespace memloupe::report {

using analysis::Count;
using analysis::Estimate;
using analysis::Estimator;

std::string function_label(const std::string& function, bool full_name) {
  return full_name ? function : short_function_name(function);
}

std::string frame_label(const analysis::Frame& f, bool full_name) {
  std::string out = function_label(f.function, full_name);
  if (!f.file.empty()) {
    out += "  " + f.file;
    if (f.line) out += ":" + std::to_string(f.line);
  }
  if (f.inlined) out += " [inlined]";
  return out;
}

Cell bytes_cell(const Estimator& e, const Count& c) {
  const Estimate est = e.bytes(c);
  return Cell{bytes_estimate(est, e.exact()), {csv_number(est.value), csv_number(est.lo), csv_number(est.hi)}};
}

Cell objects_cell(const Estimator& e, const Count& c) {
  const Estimate est = e.objects(c);
  // No upper bound (no sample at all): an empty CSV field, not a made-up number.
  return Cell{count_estimate(est, e.exact()),
              {csv_number(est.value), csv_number(est.lo), est.bounded ? csv_number(est.hi) : ""}};
}

std::vector<std::string> estimate_csv_headers(const std::string& name) {
  return {name, name + "_lo", name + "_hi"};
}

std::string key_title(analysis::SortKey key) {
  return std::string(analysis::metric_name(key.metric)) + (key.by_objects ? " blocks" : " bytes");
}

StackLines stack_lines(const std::vector<std::string>& labels, size_t own, size_t frames, bool all_frames) {
  StackLines out;
  if (labels.empty()) {
    out.leaf = "(every frame hidden)";
    return out;
  }
  const size_t first = all_frames ? 0 : std::min(own, labels.size() - 1);
  const size_t rest = labels.size() - first;
  const size_t shown = frames == 0 ? rest : std::min(rest, frames);
  out.leaf = labels[first];
  for (size_t i = 1; i < shown; ++i) out.notes.push_back("← " + labels[first + i]);
  if (shown < rest) out.notes.push_back("← … " + std::to_string(rest - shown) + " more");
  if (first > 0) {
    out.notes.push_back("(+" + std::to_string(first) + " library frame" + (first == 1 ? "" : "s") +
                        " inside: --all-frames)");
  }
  return out;
}

TextTable site_table(const analysis::Model& m, std::vector<analysis::Site> sites, const SiteTableOptions& o) {
  const Estimator& e = m.aggregate.estimator;
  const analysis::Metric metric = o.key.metric;
  analysis::sort_sites(sites, o.key, e);
  const double total = analysis::sort_value(m.aggregate.totals, o.key, e);
  const std::string name(analysis::metric_name(metric));

  TextTable t;
  t.add_column("#", TextTable::Align::Right, {"rank"});
  t.add_column(name, TextTable::Align::Right, estimate_csv_headers(name + "_bytes"));
  t.add_column("blocks", TextTable::Align::Right, estimate_csv_headers(name + "_blocks"));
  t.add_column("share", TextTable::Align::Right, {"share_percent"});
  t.add_column("site", TextTable::Align::Left, {"stack_innermost_first"});
  size_t rank = 0;
  for (const analysis::Site& s : sites) {
    const Count& c = s.metrics[metric];
    if (c.empty()) continue;
    if (e.objects_value(c) < o.min_count) continue;
    if (o.limit && rank == o.limit) break;
    ++rank;
    const double value = analysis::sort_value(s.metrics, o.key, e);
    std::string stack_csv;
    for (analysis::FrameId f : s.frames) stack_csv += (stack_csv.empty() ? "" : ";") + m.tree.frame(f).function;
    std::vector<std::string> labels;
    std::vector<const analysis::Frame*> frames;
    for (analysis::FrameId f : s.frames) {
      labels.push_back(frame_label(m.tree.frame(f), o.full_names));
      frames.push_back(&m.tree.frame(f));
    }
    StackLines lines = stack_lines(labels, analysis::first_own_frame(frames), o.frames, o.all_frames);
    t.add_row({Cell{std::to_string(rank)}, bytes_cell(e, c), objects_cell(e, c),
               Cell{human_percent(value, total), {csv_percent(value, total)}}, Cell{lines.leaf, {stack_csv}}},
              std::move(lines.notes));
  }
  return t;
}

}  // namespace memloupe::report
