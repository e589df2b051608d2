#include "symbolize/snapshot_roots.h"

#include <algorithm>
#include <map>
#include <string>

#include "format/snapshot_annex.h"
#include "symbolize/global_names.h"

namespace memloupe::symbolize {

SnapshotRoots::SnapshotRoots(const reader::RawSnapshots& raw) : sites_(raw) {
  for (const reader::RawSnapshot& s : raw.snapshots) {
    Snapshot& out = snapshots_.emplace_back();
    out.number = s.number;
    for (const reader::RawSnapshotRoot& r : s.roots)
      if (r.kind == format::SnapshotRoot::Stack && r.pc != 0) frame_pcs_.push_back(r.pc);
    for (const reader::RawSnapshotEdge& e : s.edges)
      if (e.from < s.roots.size() && s.roots[e.from].kind == format::SnapshotRoot::Global)
        out.global_words.push_back(s.roots[e.from].address + e.offset);
  }
  std::ranges::sort(frame_pcs_);
  frame_pcs_.erase(std::unique(frame_pcs_.begin(), frame_pcs_.end()), frame_pcs_.end());
}

std::vector<std::vector<uint8_t>> SnapshotRoots::annex_chunks(const ModuleMap& modules,
                                                              const SymbolizerOptions& options) const {
  if (snapshots_.empty()) return {};
  Symbolizer symbolizer(options);
  GlobalNamer namer(symbolizer);
  return annex_chunks(modules, namer);
}

std::vector<std::vector<uint8_t>> SnapshotRoots::annex_chunks(const ModuleMap& modules, GlobalNamer& namer) const {
  std::vector<std::vector<uint8_t>> out;
  if (snapshots_.empty()) return out;
  std::vector<format::SnapshotModule> module_records;
  for (const Module& m : modules.modules()) module_records.push_back({m.start, m.end, m.load_bias, m.path, m.build_id});
  const std::vector<reader::RawSnapshotThread> threads = sites_.threads();
  std::vector<format::SnapshotThread> thread_records;
  for (const reader::RawSnapshotThread& t : threads) thread_records.push_back({t.id, t.os_tid, t.name});

  for (size_t i = 0; i < snapshots_.size(); ++i) {
    const Snapshot& s = snapshots_[i];
    const std::vector<format::SnapshotName> sorted = i < names_.size() ? names_[i] : names_of(s, modules, namer);
    const BlockSiteViews sites = sites_.site_views(i);
    for (std::vector<uint8_t>& p : format::snapshot_annex_payloads(
             s.number, {sorted, sites.stacks, sites.stack_plus_one, sites.size, module_records, thread_records}))
      out.push_back(std::move(p));
  }
  return out;
}

void SnapshotRoots::name_globals(const ModuleMap& modules, GlobalNamer& namer) {
  names_.clear();
  for (const Snapshot& s : snapshots_) names_.push_back(names_of(s, modules, namer));
}

std::vector<format::SnapshotName> SnapshotRoots::names_of(const Snapshot& s, const ModuleMap& modules,
                                                          GlobalNamer& namer) {
  std::map<std::pair<uint64_t, std::string>, format::SnapshotName> names;  // by address
  for (uint64_t word : s.global_words)
    if (auto n = namer.name(modules, word)) names.emplace(std::pair(n->address, n->name), *n);
  std::vector<format::SnapshotName> sorted;
  for (auto& [address, n] : names) sorted.push_back(std::move(n));
  return sorted;
}

}  // namespace memloupe::symbolize
