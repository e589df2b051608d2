#include "retention/reachable.h"

#include <algorithm>
#include <bit>
#include <utility>

namespace memloupe::retention {
namespace {

constexpr uint32_t kNoComponent = UINT32_MAX;

// Strongly connected components of the vertices reachable from the
// super-root. Tarjan's algorithm completes a component only after every
// component it reaches, so component numbers are a reverse topological order:
// an edge between two components goes from a higher number to a lower one.
struct Components {
  std::vector<uint32_t> of;        // by vertex; kNoComponent if unreachable
  std::vector<uint64_t> begin;     // members of c: members[begin[c] .. begin[c+1])
  std::vector<uint32_t> members;
  uint32_t count() const { return static_cast<uint32_t>(begin.size()) - 1; }
};

Components strongly_connected(const NodeGraph& g) {
  const uint32_t n = g.vertex_count();
  Components c;
  c.of.assign(n, kNoComponent);
  std::vector<uint32_t> index(n, 0), low(n, 0);
  std::vector<uint8_t> on_stack(n, 0);
  std::vector<uint32_t> open;  // Tarjan's stack of vertices not yet in a component
  std::vector<std::pair<uint32_t, uint64_t>> calls;  // (vertex, next edge)
  std::vector<uint32_t> order;  // members, component by component
  std::vector<uint64_t> sizes_begin{0};
  uint32_t counter = 0;

  auto enter = [&](uint32_t v) {
    index[v] = low[v] = ++counter;
    open.push_back(v);
    on_stack[v] = 1;
    calls.emplace_back(v, g.succ.begin[v]);
  };
  enter(kSuperRoot);
  while (!calls.empty()) {
    const uint32_t v = calls.back().first;
    uint64_t& next = calls.back().second;
    if (next < g.succ.begin[v + 1]) {
      const uint32_t w = g.succ.to[next++];
      if (index[w] == 0) {
        enter(w);
      } else if (on_stack[w]) {
        low[v] = std::min(low[v], index[w]);
      }
      continue;
    }
    calls.pop_back();
    if (!calls.empty()) {
      const uint32_t u = calls.back().first;
      low[u] = std::min(low[u], low[v]);
    }
    if (low[v] != index[v]) continue;
    const uint32_t id = static_cast<uint32_t>(sizes_begin.size()) - 1;
    uint32_t w;
    do {
      w = open.back();
      open.pop_back();
      on_stack[w] = 0;
      c.of[w] = id;
      order.push_back(w);
    } while (w != v);
    sizes_begin.push_back(order.size());
  }
  c.begin = std::move(sizes_begin);
  c.members = std::move(order);
  return c;
}

}  // namespace

std::vector<Amount> reachable_per_root(const HeapSnapshot& snapshot, const NodeGraph& g) {
  std::vector<Amount> out(g.roots);
  const Components comps = strongly_connected(g);
  const uint32_t count = comps.count();

  std::vector<Amount> comp_amount(count);
  for (uint32_t c = 0; c < count; ++c) {
    for (uint64_t i = comps.begin[c]; i < comps.begin[c + 1]; ++i) {
      const uint32_t v = comps.members[i];
      if (g.is_block(v)) comp_amount[c].add(snapshot.blocks[g.block_of(v)].size);
    }
  }

  // Only roots that hold a pointer reach anything.
  std::vector<uint32_t> active;
  for (uint32_t r = 0; r < g.roots; ++r) {
    if (!g.succ.neighbours(g.vertex_of_root(r)).empty()) active.push_back(r);
  }
  // Each walk carries `words` 64-bit words per component (64 roots each): as
  // many as the roots need, within kMaskBudget words in all, so thousands of
  // roots over millions of blocks take a handful of walks, not one per 64.
  constexpr size_t kMaskBudget = size_t{16} << 20;  // 128 MiB of masks at most
  const size_t needed = (active.size() + 63) / 64;
  const size_t words = std::max<size_t>(1, std::min(needed, kMaskBudget / std::max<uint32_t>(count, 1)));
  std::vector<uint64_t> mask;
  std::vector<uint8_t> any(count);
  const size_t per_walk = words * 64;
  for (size_t group = 0; group < active.size(); group += per_walk) {
    const size_t in_group = std::min(per_walk, active.size() - group);
    mask.assign(static_cast<size_t>(count) * words, 0);
    std::fill(any.begin(), any.end(), 0);
    for (size_t k = 0; k < in_group; ++k) {
      const uint32_t c = comps.of[g.vertex_of_root(active[group + k])];
      mask[c * words + k / 64] |= uint64_t{1} << (k % 64);
      any[c] = 1;
    }
    // Topological order: from the highest component number down.
    for (uint32_t c = count; c-- > 0;) {
      if (!any[c]) continue;
      const uint64_t* from = &mask[static_cast<size_t>(c) * words];
      for (uint64_t i = comps.begin[c]; i < comps.begin[c + 1]; ++i) {
        for (uint32_t w : g.succ.neighbours(comps.members[i])) {
          const uint32_t d = comps.of[w];
          if (d == c) continue;
          uint64_t* to = &mask[static_cast<size_t>(d) * words];
          for (size_t k = 0; k < words; ++k) to[k] |= from[k];
          any[d] = 1;
        }
      }
      if (comp_amount[c].blocks == 0) continue;
      for (size_t k = 0; k < words; ++k) {
        for (uint64_t bits = from[k]; bits != 0; bits &= bits - 1) {
          out[active[group + k * 64 + static_cast<size_t>(std::countr_zero(bits))]] += comp_amount[c];
        }
      }
    }
  }
  return out;
}

}  // namespace memloupe::retention
