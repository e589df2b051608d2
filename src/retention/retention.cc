#include "retention/retention.h"

#include <algorithm>

#include "retention/reachable.h"

namespace memloupe::retention {

Retention analyze_retention(const HeapSnapshot& snapshot) {
  Retention out;
  out.graph = build_node_graph(snapshot);
  const NodeGraph& g = out.graph;
  out.dominators = compute_dominators(g);
  const std::vector<uint32_t>& idom = out.dominators.idom;
  const std::vector<uint32_t>& preorder = out.dominators.preorder;

  // Subtree sums, children before parents (dominators.h: reverse preorder).
  out.retained.assign(g.vertex_count(), Amount{});
  for (size_t i = preorder.size(); i-- > 0;) {
    const uint32_t v = preorder[i];
    if (g.is_block(v)) out.retained[v].add(snapshot.blocks[g.block_of(v)].size);
    if (idom[v] != kNoVertex) out.retained[idom[v]] += out.retained[v];
  }

  // The tree's child lists, by counting sort on the parent.
  out.child_begin_.assign(static_cast<size_t>(g.vertex_count()) + 1, 0);
  for (uint32_t v : preorder) {
    if (idom[v] != kNoVertex) ++out.child_begin_[idom[v] + 1];
  }
  for (uint32_t v = 0; v < g.vertex_count(); ++v) out.child_begin_[v + 1] += out.child_begin_[v];
  out.children_.resize(out.child_begin_.back());
  std::vector<uint64_t> fill(out.child_begin_.begin(), out.child_begin_.end() - 1);
  for (uint32_t v : preorder) {
    if (idom[v] != kNoVertex) out.children_[fill[idom[v]]++] = v;
  }
  for (uint32_t v = 0; v < g.vertex_count(); ++v) {
    auto first = out.children_.begin() + static_cast<ptrdiff_t>(out.child_begin_[v]);
    auto last = out.children_.begin() + static_cast<ptrdiff_t>(out.child_begin_[v + 1]);
    std::sort(first, last, [&](uint32_t a, uint32_t b) {
      if (out.retained[a].bytes != out.retained[b].bytes) return out.retained[a].bytes > out.retained[b].bytes;
      return a < b;
    });
  }

  for (uint32_t v : out.children(kSuperRoot)) {
    if (g.is_block(v)) out.shared += out.retained[v];
  }
  const std::vector<Amount> reachable = reachable_per_root(snapshot, g);
  out.roots.resize(g.roots);
  for (uint32_t r = 0; r < g.roots; ++r) {
    out.roots[r].retained = out.retained[g.vertex_of_root(r)];
    out.roots[r].reachable = reachable[r];
  }
  out.leaks = classify_leaks(snapshot, g);
  return out;
}

std::optional<uint32_t> block_at(const HeapSnapshot& snapshot, uint64_t address) {
  const std::vector<Block>& blocks = snapshot.blocks;
  auto it = std::upper_bound(blocks.begin(), blocks.end(), address,
                             [](uint64_t a, const Block& b) { return a < b.address; });
  if (it == blocks.begin()) return std::nullopt;
  --it;
  if (address - it->address >= std::max<uint64_t>(it->size, 1)) return std::nullopt;
  return static_cast<uint32_t>(it - blocks.begin());
}

}  // namespace memloupe::retention
