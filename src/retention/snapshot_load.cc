#include "retention/snapshot_load.h"

#include <algorithm>
#include <memory>
#include <variant>

#include "reader/bytes.h"
#include "retention/root_names.h"

namespace memloupe::retention {
namespace {

using reader::add_damage;

// For snapshots without an annex: one pass over the events for their blocks'
// sites and sizes, the threads and the modules.
void read_events(reader::Reader& r, const reader::RawSnapshots& raw, SnapshotSet& out,
                 symbolize::ModuleMap& modules) {
  symbolize::SnapshotSites sites(raw);
  while (const format::Event* e = r.next()) {
    sites.add(*e);
    if (const auto* m = std::get_if<format::ModuleLoad>(e)) {
      modules.load(*m);
    } else if (const auto* u = std::get_if<format::ModuleUnload>(e)) {
      modules.unload(u->start);
    }
  }
  if (r.error()) add_damage(out.damage, "the events: " + r.error()->message);
  for (size_t i = 0; i < raw.snapshots.size(); ++i)
    if (!raw.snapshots[i].annexed) out.sites[i] = sites.sites(i);
  out.threads = sites.threads();
  out.read_events = true;
}

symbolize::BlockSites from_annex(const reader::RawSnapshot& raw) {
  symbolize::BlockSites out;
  out.stacks = raw.stacks;
  for (const reader::RawSnapshotSite& s : raw.sites) {
    out.stack_plus_one.push_back(s.stack_plus_one);
    out.size.push_back(s.size);
  }
  return out;
}

HeapSnapshot assemble(const reader::RawSnapshot& raw, const symbolize::BlockSites& sites, RootNamer& namer) {
  HeapSnapshot s;
  s.label = raw.label;
  s.time_ns = raw.time_ns;
  s.at_exit = raw.at_exit;
  RootNamer::Named named = namer.name(raw);
  s.roots = std::move(named.roots);
  s.blocks.reserve(raw.blocks.size());
  for (size_t b = 0; b < raw.blocks.size(); ++b) {
    const reader::RawSnapshotBlock& rb = raw.blocks[b];
    // Without its Alloc event (damaged events), the extent scanned stands in.
    const uint64_t size = sites.stack_plus_one[b] != 0 ? sites.size[b] : rb.extent;
    s.blocks.push_back({rb.address, size, format::AllocId{rb.alloc_id}});
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

  symbolize::ModuleMap modules;
  out.sites.resize(raw.snapshots.size());
  for (size_t i = 0; i < raw.snapshots.size(); ++i)
    if (raw.snapshots[i].annexed) out.sites[i] = from_annex(raw.snapshots[i]);
  // The annexes were written by one finaliser from the whole trace: any one
  // has the trace's modules and threads.
  const auto annexed = std::find_if(raw.snapshots.begin(), raw.snapshots.end(),
                                    [](const reader::RawSnapshot& s) { return s.annexed; });
  // Opening reads the symbols section, not the events.
  auto opened = reader::Reader::open(trace.string());
  if (!opened) add_damage(out.damage, opened.error().message);
  if (opened) out.symbols = (*opened)->symbols();
  const bool all_annexed = std::all_of(raw.snapshots.begin(), raw.snapshots.end(),
                                       [](const reader::RawSnapshot& s) { return s.annexed; });
  if (!all_annexed && opened) {
    read_events(**opened, raw, out, modules);
  } else if (annexed != raw.snapshots.end()) {
    for (const reader::RawSnapshotModule& m : annexed->modules)
      modules.load({0, m.start, m.end, m.load_bias, m.path, m.build_id});
    out.threads = annexed->thread_names;
  }
  // Blocks whose sites nothing gave (the events could not be read) have none.
  for (size_t i = 0; i < raw.snapshots.size(); ++i) {
    const size_t n = raw.snapshots[i].blocks.size();
    if (out.sites[i].stack_plus_one.size() == n) continue;
    out.sites[i].stack_plus_one.assign(n, 0);
    out.sites[i].size.assign(n, 0);
  }
  out.modules = modules.modules();
  RootNamer namer(modules, out.symbols);
  for (size_t i = 0; i < raw.snapshots.size(); ++i)
    out.snapshots.push_back(assemble(raw.snapshots[i], out.sites[i], namer));
  return out;
}

}  // namespace memloupe::retention
