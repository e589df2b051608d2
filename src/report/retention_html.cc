#include "report/retention_html.h"

#include <algorithm>

#include "report/retention_json.h"

namespace memloupe::report {
namespace {

using retention::Amount;

class TreeWriter {
 public:
  TreeWriter(JsonWriter& j, const SnapshotReport& r, const RetentionHtmlLimits& l) : j_(j), r_(r), l_(l) {}

  std::string cut(std::string s) const { return report::cut(std::move(s), l_.name_bytes); }

  // The children of `vertex` as a "children" array (and "more_*" for the rest).
  // Recursion is bounded by l_.depth, not by the heap's shape.
  void children(uint32_t vertex, size_t depth) {
    const auto kids = r_.retention.children(vertex);
    size_t shown = 0;
    j_.key("children").begin_array();
    if (depth < l_.depth) {
      for (; shown < kids.size() && shown < l_.breadth && used_ < l_.nodes; ++shown) node(kids[shown], depth + 1);
    }
    j_.end_array();
    if (shown < kids.size()) {
      j_.key("more_count").integer(kids.size() - shown);
      j_.key("more_bytes").integer(r_.retention.retained_sum(kids.subspan(shown)).bytes);
    }
  }

  void node(uint32_t vertex, size_t depth) {
    ++used_;
    const uint32_t b = r_.retention.graph.block_of(vertex);
    const Amount& a = r_.retention.retained[vertex];
    j_.begin_object();
    j_.key("block").string(cut(block_label(r_.snapshot, b)));
    j_.key("site").string(cut(r_.names.site_label(r_.names.site_of(b))));
    j_.key("retained_bytes").integer(a.bytes);
    j_.key("retained_blocks").integer(a.blocks);
    children(vertex, depth);
    j_.end_object();
  }

  size_t used() const { return used_; }

 private:
  JsonWriter& j_;
  const SnapshotReport& r_;
  const RetentionHtmlLimits& l_;
  size_t used_ = 0;
};

}  // namespace

std::string retention_html_json(std::span<const SnapshotReport> reports, const RetentionHtmlLimits& limits) {
  if (reports.empty()) return "null";
  JsonWriter j;
  j.begin_object().key("snapshots").begin_array();
  for (const SnapshotReport& r : reports) {
    const retention::Retention& ret = r.retention;
    const retention::NodeGraph& g = ret.graph;
    TreeWriter tree(j, r, limits);
    j.begin_object();
    j.key("label").string(tree.cut(r.snapshot.label));
    j.key("time_ns").integer(r.snapshot.time_ns);
    j.key("at_exit").boolean(r.snapshot.at_exit);
    amount_json(j, "reachable", ret.retained[retention::kSuperRoot]);
    amount_json(j, "shared", ret.shared);
    j.key("leaks").begin_object();
    amount_json(j, "definitely_lost", ret.leaks.summary.definitely_lost);
    amount_json(j, "indirectly_lost", ret.leaks.summary.indirectly_lost);
    amount_json(j, "possibly_lost", ret.leaks.summary.possibly_lost);
    amount_json(j, "still_reachable", ret.leaks.summary.still_reachable);
    j.end_object();

    // The super-root's children: roots that hold anything, and shared blocks.
    std::vector<uint32_t> tops;
    for (uint32_t v : ret.children(retention::kSuperRoot)) {
      if (ret.retained[v].blocks != 0 || (g.is_root(v) && ret.roots[g.root_of(v)].reachable.blocks != 0)) {
        tops.push_back(v);
      }
    }
    j.key("roots_total").integer(tops.size());
    j.key("roots").begin_array();
    for (size_t i = 0; i < tops.size() && i < limits.roots; ++i) {
      const uint32_t v = tops[i];
      j.begin_object();
      if (g.is_root(v)) {
        const retention::Root& root = r.snapshot.roots[g.root_of(v)];
        j.key("kind").string(root_kind_name(root.kind));
        j.key("name").string(tree.cut(r.names.root_label(root)));
        j.key("where").string(tree.cut(r.names.root_where(root)));
        amount_json(j, "reachable", ret.roots[g.root_of(v)].reachable);
      } else {
        j.key("kind").string("shared");
        j.key("name").string(tree.cut(block_label(r.snapshot, g.block_of(v))));
        j.key("where").string(tree.cut(r.names.site_label(r.names.site_of(g.block_of(v)))));
      }
      amount_json(j, "retained", ret.retained[v]);
      tree.children(v, 0);
      j.end_object();
    }
    j.end_array();
    j.key("tree_nodes").integer(tree.used());
    j.end_object();
  }
  j.end_array().end_object();
  return j.take();
}

}  // namespace memloupe::report
