// `memloupe retention --json`: every snapshot with its roots, their retained
// and reachable bytes and biggest retained blocks, memcheck's leak kinds and
// the live blocks by allocation site and by type. The field names are the and do
// not change; docs/RETENTION.md lists them.
#include <algorithm>

#include "report/retention_json.h"

namespace memloupe::report {
namespace {

using retention::Amount;

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
  amount_json(j, "retained", r.retention.retained[vertex]);
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
  amount_json(j, "live", live);
  amount_json(j, "reachable", ret.retained[retention::kSuperRoot]);
  amount_json(j, "shared", ret.shared);
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
    amount_json(j, "retained", ret.roots[i].retained);
    amount_json(j, "reachable", ret.roots[i].reachable);
    j.key("blocks").begin_array();
    const auto children = ret.children(g.vertex_of_root(i));
    for (size_t c = 0; c < children.size() && c < o.blocks; ++c) block_object(j, r, children[c]);
    j.end_array();
    j.end_object();
  }
  j.end_array();

  const retention::LeakSummary& l = ret.leaks.summary;
  j.key("leaks").begin_object();
  amount_json(j, "definitely_lost", l.definitely_lost);
  amount_json(j, "indirectly_lost", l.indirectly_lost);
  amount_json(j, "possibly_lost", l.possibly_lost);
  amount_json(j, "still_reachable", l.still_reachable);
  j.end_object();

  // Live blocks by site, each with its bytes per leak kind.
  j.key("sites").begin_array();
  for (const SiteRetention& site : retention_by_site(r)) {
    j.begin_object();
    amount_json(j, "live", site.live);
    amount_json(j, "definitely_lost", site.kinds.definitely_lost);
    amount_json(j, "indirectly_lost", site.kinds.indirectly_lost);
    amount_json(j, "possibly_lost", site.kinds.possibly_lost);
    amount_json(j, "still_reachable", site.kinds.still_reachable);
    site_fields(j, r.names, site.site);
    j.end_object();
  }
  j.end_array();

  // Live blocks by type (the trace's types table).
  j.key("types").begin_array();
  for (const TypeRetention& t : retention_by_type(r)) {
    const RetentionType& type = r.names.types()[t.type];
    j.begin_object();
    j.key("type").string(type.name);
    j.key("known").boolean(type.known);
    if (type.known) j.key("type_size").integer(type.type_size);
    amount_json(j, "live", t.live);
    j.key("objects").integer(t.objects);
    j.end_object();
  }
  j.end_array();
  j.end_object();
}

}  // namespace

void amount_json(JsonWriter& j, std::string_view name, const Amount& a) {
  j.key(std::string(name) + "_bytes").integer(a.bytes);
  j.key(std::string(name) + "_blocks").integer(a.blocks);
}

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
