#include "retention/dominators.h"

#include <utility>

namespace memloupe::retention {
namespace {

// Lengauer & Tarjan, "A fast algorithm for finding dominators in a flowgraph"
// (TOPLAS 1979), the simple version. Everything below is indexed by depth-first
// number, 1-based, so that 0 can mean "none" (no ancestor in the forest, empty
// bucket).
class LengauerTarjan {
 public:
  explicit LengauerTarjan(const NodeGraph& g) : g_(g) {}

  Dominators run() {
    number_vertices();
    const uint32_t count = static_cast<uint32_t>(vertex_.size()) - 1;
    for (uint32_t w = count; w >= 2; --w) {
      // Semidominator: the smallest semi of eval(v) over predecessors v.
      for (uint32_t p : g_.pred.neighbours(vertex_[w])) {
        const uint32_t v = number_[p];
        if (v == 0) continue;  // an unreachable predecessor is no path from the root
        const uint32_t u = eval(v);
        if (semi_[u] < semi_[w]) semi_[w] = semi_[u];
      }
      bucket_next_[w] = bucket_head_[semi_[w]];
      bucket_head_[semi_[w]] = w;
      const uint32_t p = parent_[w];
      ancestor_[w] = p;  // link(parent, w)
      // Implicit immediate dominators of the vertices whose semidominator is p.
      for (uint32_t v = bucket_head_[p]; v != 0; v = bucket_next_[v]) {
        const uint32_t u = eval(v);
        dom_[v] = semi_[u] < semi_[v] ? u : p;
      }
      bucket_head_[p] = 0;
    }
    for (uint32_t w = 2; w <= count; ++w) {
      if (dom_[w] != semi_[w]) dom_[w] = dom_[dom_[w]];
    }

    Dominators out;
    out.idom.assign(g_.vertex_count(), kNoVertex);
    for (uint32_t w = 2; w <= count; ++w) out.idom[vertex_[w]] = vertex_[dom_[w]];
    out.preorder.assign(vertex_.begin() + 1, vertex_.end());
    return out;
  }

 private:
  // Iterative depth-first search from the super-root: numbers the reachable
  // vertices in preorder and records each one's depth-first parent.
  void number_vertices() {
    const uint32_t n = g_.vertex_count();
    number_.assign(n, 0);
    vertex_.assign(1, kNoVertex);
    parent_.assign(1, 0);
    std::vector<std::pair<uint32_t, uint64_t>> stack;  // (vertex, next edge)
    visit(kSuperRoot, 0);
    stack.emplace_back(kSuperRoot, g_.succ.begin[kSuperRoot]);
    while (!stack.empty()) {
      auto& [v, next] = stack.back();
      if (next == g_.succ.begin[v + 1]) {
        stack.pop_back();
        continue;
      }
      const uint32_t w = g_.succ.to[next++];
      if (number_[w] != 0) continue;
      visit(w, number_[v]);
      stack.emplace_back(w, g_.succ.begin[w]);
    }
    const size_t count = vertex_.size();
    semi_.resize(count);
    label_.resize(count);
    for (uint32_t i = 0; i < count; ++i) semi_[i] = label_[i] = i;
    ancestor_.assign(count, 0);
    dom_.assign(count, 0);
    bucket_head_.assign(count, 0);
    bucket_next_.assign(count, 0);
  }

  void visit(uint32_t v, uint32_t parent) {
    vertex_.push_back(v);
    parent_.push_back(parent);
    number_[v] = static_cast<uint32_t>(vertex_.size()) - 1;
  }

  // The vertex with the smallest semidominator on the forest path above v
  // (v itself if it is a forest root), compressing the path on the way.
  uint32_t eval(uint32_t v) {
    if (ancestor_[v] == 0) return v;
    compress(v);
    return label_[v];
  }

  // The recursive compress(v) of the paper, unrolled: first collect the path up
  // to the vertex just below the forest root, then apply the updates from the
  // top down, as the recursion's returns would.
  void compress(uint32_t v) {
    path_.clear();
    for (uint32_t x = v; ancestor_[ancestor_[x]] != 0; x = ancestor_[x]) path_.push_back(x);
    for (size_t i = path_.size(); i-- > 0;) {
      const uint32_t x = path_[i];
      const uint32_t a = ancestor_[x];
      if (semi_[label_[a]] < semi_[label_[x]]) label_[x] = label_[a];
      ancestor_[x] = ancestor_[a];
    }
  }

  const NodeGraph& g_;
  std::vector<uint32_t> number_;  // by vertex: depth-first number, 0 = unreached
  std::vector<uint32_t> vertex_;  // by number: the vertex
  std::vector<uint32_t> parent_, semi_, label_, ancestor_, dom_, bucket_head_, bucket_next_;
  std::vector<uint32_t> path_;
};

}  // namespace

Dominators compute_dominators(const NodeGraph& graph) { return LengauerTarjan(graph).run(); }

}  // namespace memloupe::retention
