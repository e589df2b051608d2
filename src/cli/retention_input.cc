#include "cli/retention_input.h"

#include "cli/commands.h"
#include "cli/trace_input.h"
#include "report/retention_html.h"

namespace memloupe::cli {

std::unique_ptr<RetentionInput> analyse_snapshots(reader::Reader& reader, retention::SnapshotSet set,
                                                  const std::vector<size_t>& chosen, bool full_names) {
  auto in = std::make_unique<RetentionInput>();
  in->set = std::move(set);
  std::vector<format::AllocId> ids;
  for (size_t i : chosen) {
    for (const retention::Block& b : in->set.snapshots[i].blocks) ids.push_back(b.alloc);
  }
  if (!chosen.empty()) in->stacks = analysis::read_alloc_stacks(reader, ids);
  for (size_t i : chosen) {
    const retention::HeapSnapshot& s = in->set.snapshots[i];
    in->analyses.push_back(retention::analyze_retention(s));
    in->names.emplace_back(s, in->stacks, full_names);
    in->reports.push_back({s, in->analyses.back(), in->names.back(), i + 1, in->set.snapshots.size()});
  }
  return in;
}

std::string retention_html(const std::string& trace, int& exit_code) {
  retention::SnapshotSet set = retention::load_snapshots(trace);
  if (!set.damage.empty()) {
    complain(trace, set.damage);
    exit_code = kDamaged;
  }
  if (set.snapshots.empty()) return {};
  int open_code = kOk;
  std::unique_ptr<reader::Reader> reader = open_trace(trace, open_code);
  if (!reader) return {};
  std::vector<size_t> all(set.snapshots.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::unique_ptr<RetentionInput> in = analyse_snapshots(*reader, std::move(set), all, false);
  return report::retention_html_json(in->reports);
}

}  // namespace memloupe::cli
