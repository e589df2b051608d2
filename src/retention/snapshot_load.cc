#include "retention/snapshot_load.h"

#include <algorithm>
#include <unordered_map>
#include <variant>

#include "reader/bytes.h"
#include "reader/reader.h"
#include "reader/snapshot_decoder.h"
#include "retention/root_names.h"
#include "symbolize/module_map.h"

namespace memloupe::retention {
namespace {

using reader::add_damage;

// What the events say that the snapshots need: each block's requested size
// (the scan knew only the allocator's usable size) and the module map.
struct FromEvents {
  std::unordered_map<uint64_t, uint64_t> size_of;  // AllocId -> requested bytes
  symbolize::ModuleMap modules;
  reader::SymbolTable symbols;  // the symbols section, with the frames' pcs once finalised
};

FromEvents read_events(const std::filesystem::path& trace, const reader::RawSnapshots& raw,
                       std::string& damage) {
  FromEvents out;
  for (const reader::RawSnapshot& s : raw.snapshots)
    for (const reader::RawSnapshotBlock& b : s.blocks) out.size_of.emplace(b.alloc_id, UINT64_MAX);
  auto opened = reader::Reader::open(trace.string());
  if (!opened) {
    add_damage(damage, opened.error().message);
    return out;
  }
  reader::Reader& r = **opened;
  while (const format::Event* e = r.next()) {
    if (const auto* a = std::get_if<format::Alloc>(e)) {
      if (auto it = out.size_of.find(a->id.value); it != out.size_of.end()) it->second = a->size;
    } else if (const auto* m = std::get_if<format::ModuleLoad>(e)) {
      out.modules.load(*m);
    } else if (const auto* u = std::get_if<format::ModuleUnload>(e)) {
      out.modules.unload(u->start);
    }
  }
  if (r.error()) add_damage(damage, "the events: " + r.error()->message);
  out.symbols = r.symbols();
  return out;
}

HeapSnapshot assemble(const reader::RawSnapshot& raw, const FromEvents& events, RootNamer& namer) {
  HeapSnapshot s;
  s.label = raw.label;
  s.time_ns = raw.time_ns;
  s.at_exit = raw.at_exit;
  RootNamer::Named named = namer.name(raw);
  s.roots = std::move(named.roots);
  s.blocks.reserve(raw.blocks.size());
  for (const reader::RawSnapshotBlock& b : raw.blocks) {
    const auto it = events.size_of.find(b.alloc_id);
    // Without its Alloc event (damaged events), the extent scanned stands in.
    const uint64_t size = it != events.size_of.end() && it->second != UINT64_MAX ? it->second : b.extent;
    s.blocks.push_back({b.address, size, format::AllocId{b.alloc_id}});
  }
  const auto n_roots = static_cast<uint32_t>(raw.roots.size());
  s.edges.reserve(raw.edges.size());
  for (size_t e = 0; e < raw.edges.size(); ++e) {
    const reader::RawSnapshotEdge& re = raw.edges[e];
    if (re.from < n_roots && named.edge_root[e] == RootNamer::kNotARoot) continue;
    const uint32_t from = re.from < n_roots ? named.edge_root[e] : s.node_of_block(re.from - n_roots);
    s.edges.push_back({from, re.to, re.interior});
  }
  // One edge per (from, to); it is interior only if no word pointed at the start.
  std::sort(s.edges.begin(), s.edges.end(), [](const Edge& a, const Edge& b) {
    return a.from != b.from ? a.from < b.from : a.to != b.to ? a.to < b.to : a.interior < b.interior;
  });
  s.edges.erase(std::unique(s.edges.begin(), s.edges.end(),
                            [](const Edge& a, const Edge& b) { return a.from == b.from && a.to == b.to; }),
                s.edges.end());
  return s;
}

}  // namespace

SnapshotSet load_snapshots(const std::filesystem::path& trace) {
  SnapshotSet out;
  auto bytes = reader::Bytes::map_file(trace.string());
  if (!bytes) {
    out.damage = bytes.error().message;
    return out;
  }
  reader::RawSnapshots raw = reader::decode_snapshots((*bytes)->data());
  out.damage = std::move(raw.damage);
  if (raw.snapshots.empty()) return out;
  const FromEvents events = read_events(trace, raw, out.damage);
  RootNamer namer(events.modules, events.symbols);
  for (const reader::RawSnapshot& r : raw.snapshots) out.snapshots.push_back(assemble(r, events, namer));
  return out;
}

}  // namespace memloupe::retention
