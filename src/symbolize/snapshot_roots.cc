#include "symbolize/snapshot_roots.h"

#include <algorithm>
#include <map>

#include "reader/snapshot_decoder.h"
#include "symbolize/global_names.h"

namespace memloupe::symbolize {

SnapshotRootNames name_snapshot_roots(std::span<const uint8_t> trace, const ModuleMap& modules,
                                      const SymbolizerOptions& options) {
  SnapshotRootNames out;
  const reader::RawSnapshots raw = reader::decode_snapshots(trace);
  if (raw.snapshots.empty()) return out;
  Symbolizer symbolizer(options);
  GlobalNamer namer(modules, symbolizer);
  for (const reader::RawSnapshot& s : raw.snapshots) {
    for (const reader::RawSnapshotRoot& r : s.roots)
      if (r.kind == format::SnapshotRoot::Stack && r.pc != 0) out.frame_pcs.push_back(r.pc);
    std::map<std::pair<uint64_t, std::string>, format::SnapshotName> names;  // by address
    for (const reader::RawSnapshotEdge& e : s.edges) {
      if (e.from >= s.roots.size() || s.roots[e.from].kind != format::SnapshotRoot::Global) continue;
      if (auto n = namer.name(s.roots[e.from].address + e.offset)) names.emplace(std::pair(n->address, n->name), *n);
    }
    std::vector<format::SnapshotName> sorted;
    for (auto& [address, n] : names) sorted.push_back(std::move(n));
    out.names_chunks.push_back(format::snapshot_names_payload(s.number, sorted));
  }
  std::ranges::sort(out.frame_pcs);
  out.frame_pcs.erase(std::unique(out.frame_pcs.begin(), out.frame_pcs.end()), out.frame_pcs.end());
  return out;
}

}  // namespace memloupe::symbolize
