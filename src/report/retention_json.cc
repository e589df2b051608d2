// `memloupe retention --json`: every snapshot with its roots, their retained
// and reachable bytes and biggest retained blocks, memcheck's leak kinds and
// the live blocks by allocation site. The field names are the and do
// not change; docs/RETENTION.md lists them.
#include <algorithm>

#include "report/html_json.h"
#include "report/text_retention.h"

namespace memloupe::report {
namespace {

using retention::Amount;

void amount_fields(JsonWriter& j, const std::string& name, const Amount& a) {
  j.key(name + "_bytes").integer(a.bytes);
  j.key(name + "_blocks").integer(a.blocks);
}

void site_fields(JsonWriter& j, const RetentionNames& names, uint32_t site) {
  j.key("site").begin_array();
  if (site != RetentionNames::kUnknownSite) {
    for (const analysis::Frame& f : names.sites()[site].frames) {
      j.begin_object().key("function").string(f.function);
      if (!f.file.empty()) j.key("file").string(f.file).key("line").integer(f.line);
      j.end_object();
    }
  }
  j.end_array();
}

void block_object(JsonWriter& j, const SnapshotReport& r, uint32_t vertex) {
  const retention::NodeGraph& g = r.retention.graph;
  const uint32_t b = g.block_of(vertex);
  const retention::Block& block = r.snapshot.blocks[b];
  j.begin_object();
  j.key("address").integer(block.address);
  j.key("size").integer(block.size);
  j.key("alloc_id").integer(block.alloc.value);
  amount_fields(j, "retained", r.retention.retained[vertex]);
  site_fields(j, r.names, r.names.site_of(b));
  j.end_object();
}

void snapshot_object(JsonWriter& j, const SnapshotReport& r, const RetentionOptions& o) {
  const retention::HeapSnapshot& s = r.snapshot;
  const retention::Retention& ret = r.retention;
  const retention::NodeGraph& g = ret.graph;
  j.begin_object();
  j.key("label").string(s.label);
  j.key("time").number(static_cast<double>(s.time_ns) / 1e9);
  j.key("time_ns").integer(s.time_ns);
  j.key("at_exit").boolean(s.at_exit);
  Amount live;
  for (const retention::Block& b : s.blocks) live.add(b.size);
  amount_fields(j, "live", live);
  amount_fields(j, "reachable", ret.retained[retention::kSuperRoot]);
  amount_fields(j, "shared", ret.shared);
  j.key("dropped_edges").integer(ret.graph.dropped_edges);

  // Every root, the largest retained first.
  std::vector<uint32_t> order(s.roots.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return ret.roots[a].retained.bytes > ret.roots[b].retained.bytes;
  });
  j.key("roots").begin_array();
  for (uint32_t i : order) {
    const retention::Root& root = s.roots[i];
    j.begin_object();
    j.key("kind").string(root_kind_name(root.kind));
    j.key("name").string(root.name);
    if (root.kind != retention::RootKind::Global) j.key("thread").string(r.names.thread_label(root.thread));
    if (!root.module.empty()) j.key("module").string(root.module);
    if (!root.file.empty()) j.key("file").string(root.file).key("line").integer(root.line);
    j.key("address").integer(root.address);
    j.key("size").integer(root.size);
    amount_fields(j, "retained", ret.roots[i].retained);
    amount_fields(j, "reachable", ret.roots[i].reachable);
    j.key("blocks").begin_array();
    const auto children = ret.children(g.vertex_of_root(i));
    for (size_t c = 0; c < children.size() && c < o.blocks; ++c) block_object(j, r, children[c]);
    j.end_array();
    j.end_object();
  }
  j.end_array();

  const retention::LeakSummary& l = ret.leaks.summary;
  j.key("leaks").begin_object();
  amount_fields(j, "definitely_lost", l.definitely_lost);
  amount_fields(j, "indirectly_lost", l.indirectly_lost);
  amount_fields(j, "possibly_lost", l.possibly_lost);
  amount_fields(j, "still_reachable", l.still_reachable);
  j.end_object();

  // Live blocks by site, each with its bytes per leak kind.
  const size_t unknown = r.names.sites().size();
  struct SiteAmounts {
    Amount live;
    retention::LeakSummary kinds;
  };
  std::vector<SiteAmounts> sites(unknown + 1);
  for (uint32_t b = 0; b < s.blocks.size(); ++b) {
    const uint32_t site = r.names.site_of(b);
    SiteAmounts& a = sites[site == RetentionNames::kUnknownSite ? unknown : site];
    a.live.add(s.blocks[b].size);
    a.kinds[ret.leaks.of_block[b]].add(s.blocks[b].size);
  }
  std::vector<size_t> by_bytes;
  for (size_t i = 0; i <= unknown; ++i) {
    if (sites[i].live.blocks) by_bytes.push_back(i);
  }
  std::stable_sort(by_bytes.begin(), by_bytes.end(),
                   [&](size_t a, size_t b) { return sites[a].live.bytes > sites[b].live.bytes; });
  j.key("sites").begin_array();
  for (size_t i : by_bytes) {
    j.begin_object();
    amount_fields(j, "live", sites[i].live);
    amount_fields(j, "definitely_lost", sites[i].kinds.definitely_lost);
    amount_fields(j, "indirectly_lost", sites[i].kinds.indirectly_lost);
    amount_fields(j, "possibly_lost", sites[i].kinds.possibly_lost);
    amount_fields(j, "still_reachable", sites[i].kinds.still_reachable);
    site_fields(j, r.names, i == unknown ? RetentionNames::kUnknownSite : static_cast<uint32_t>(i));
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

std::string retention_json(std::span<const SnapshotReport> reports, const RetentionOptions& options,
                           const std::string& damage) {
  JsonWriter j;
  j.begin_object();
  j.key("snapshots").begin_array();
  for (const SnapshotReport& r : reports) snapshot_object(j, r, options);
  j.end_array();
  if (!damage.empty()) j.key("damage").string(damage);
  j.end_object();
  return j.take() + '\n';
}

}  // namespace memloupe::report
