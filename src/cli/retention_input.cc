#include "cli/retention_input.h"

#include "cli/commands.h"
#include "cli/trace_input.h"
#include "report/retention_html.h"

namespace memloupe::cli {
namespace {

// The blocks' backtraces, the modules and the threads as the views' naming
// takes them (report::RetentionNames): the modules and threads go through an
// OverviewBuilder as the events they came from, so they read as in every view.
analysis::AllocStacks stacks_of(retention::SnapshotSet& set, const std::vector<size_t>& chosen) {
  analysis::OverviewBuilder overview{format::TraceInfo{}};
  for (const symbolize::Module& m : set.modules) overview.add(format::ModuleLoad{0, m.start, m.end, m.load_bias, m.path, m.build_id});
  for (const reader::RawSnapshotThread& t : set.threads) {
    overview.add(format::ThreadStart{format::ThreadId{t.id}, 0, t.os_tid});
    if (!t.name.empty()) overview.add(format::ThreadName{format::ThreadId{t.id}, 0, t.name});
  }
  analysis::AllocStacks out;
  for (size_t i : chosen) {
    const retention::HeapSnapshot& s = set.snapshots[i];
    const symbolize::BlockSites& sites = set.sites[i];
    for (size_t b = 0; b < s.blocks.size(); ++b) {
      if (sites.stack_plus_one[b] == 0) continue;
      out.stack_of[s.blocks[b].alloc.value] = out.stacks.intern(sites.stacks[sites.stack_plus_one[b] - 1]).first;
    }
  }
  out.overview = std::move(overview).finish(std::nullopt);
  out.symbols = std::move(set.symbols);
  return out;
}

}  // namespace

std::unique_ptr<RetentionInput> analyse_snapshots(retention::SnapshotSet set, const std::vector<size_t>& chosen,
                                                  const report::SiteStyle& style, types::TypeTable types) {
  auto in = std::make_unique<RetentionInput>();
  in->set = std::move(set);
  in->types = std::move(types);
  in->stacks = stacks_of(in->set, chosen);
  for (size_t i : chosen) {
    const retention::HeapSnapshot& s = in->set.snapshots[i];
    in->analyses.push_back(retention::analyze_retention(s));
    in->names.emplace_back(s, in->stacks, style, &in->types);
    in->reports.push_back({s, in->analyses.back(), in->names.back(), i + 1, in->set.snapshots.size()});
  }
  return in;
}

retention::SnapshotSet load_retention(const std::string& trace, types::TypeTable& types) {
  retention::SnapshotSet set = retention::load_snapshots(trace);
  if (set.snapshots.empty()) return set;
  types::LoadedTypes loaded = types::load_types_file(trace);
  if (loaded.problem) reader::add_damage(set.damage, "the types table: " + loaded.problem->message);
  types = std::move(loaded.table);
  return set;
}

std::string retention_html(const std::string& trace, int& exit_code) {
  types::TypeTable types;
  retention::SnapshotSet set = load_retention(trace, types);
  if (!set.damage.empty()) {
    complain(trace, set.damage);
    exit_code = kDamaged;
  }
  if (set.snapshots.empty()) return {};
  std::vector<size_t> all(set.snapshots.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const std::unique_ptr<RetentionInput> in = analyse_snapshots(std::move(set), all, {}, std::move(types));
  return report::retention_html_json(in->reports);
}

}  // namespace memloupe::cli
