#include "retention/paths.h"

#include <algorithm>

namespace memloupe::retention {

std::vector<RootPath> shortest_paths(const NodeGraph& g, std::span<const uint32_t> target_blocks,
                                     size_t limit) {
  const uint32_t n = g.vertex_count();
  std::vector<uint32_t> next(n, kNoVertex);  // the hop towards the nearest target
  std::vector<uint32_t> dist(n, UINT32_MAX);
  std::vector<uint32_t> queue;
  for (uint32_t b : target_blocks) {
    if (b >= g.blocks) continue;
    const uint32_t v = g.vertex_of_block(b);
    if (dist[v] == 0) continue;
    dist[v] = 0;
    queue.push_back(v);
  }
  for (size_t head = 0; head < queue.size(); ++head) {
    const uint32_t v = queue[head];
    for (uint32_t p : g.pred.neighbours(v)) {
      if (p == kSuperRoot || dist[p] != UINT32_MAX) continue;
      dist[p] = dist[v] + 1;
      next[p] = v;
      queue.push_back(p);
    }
  }

  std::vector<uint32_t> roots;
  for (uint32_t r = 0; r < g.roots; ++r) {
    if (dist[g.vertex_of_root(r)] != UINT32_MAX) roots.push_back(r);
  }
  std::stable_sort(roots.begin(), roots.end(), [&](uint32_t a, uint32_t b) {
    return dist[g.vertex_of_root(a)] < dist[g.vertex_of_root(b)];
  });
  if (roots.size() > limit) roots.resize(limit);

  std::vector<RootPath> out;
  for (uint32_t r : roots) {
    RootPath path{r, {}};
    for (uint32_t v = next[g.vertex_of_root(r)]; v != kNoVertex; v = next[v]) {
      path.blocks.push_back(g.block_of(v));
    }
    out.push_back(std::move(path));
  }
  return out;
}

}  // namespace memloupe::retention
