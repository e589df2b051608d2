#include "retention/paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>

#include "support/test_snapshot.h"

namespace memloupe::retention {
namespace {

using testing::SnapshotBuilder;

TEST(Paths, ShortestFromEachRootNearestFirst) {
  SnapshotBuilder s;
  const uint32_t far = s.root("far"), near = s.root("near"), none = s.root("none");
  const uint32_t a = s.block(8), b = s.block(8), c = s.block(8), target = s.block(8), other = s.block(8);
  s.root_edge(far, a);
  s.block_edge(a, b);
  s.block_edge(b, c);
  s.block_edge(c, target);
  s.block_edge(a, target);  // a shortcut: far reaches target in two hops
  s.root_edge(near, target);
  s.root_edge(none, other);
  const HeapSnapshot snap = s.build();
  const NodeGraph g = build_node_graph(snap);
  const uint32_t targets[] = {target};
  const std::vector<RootPath> paths = shortest_paths(g, targets, 10);
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].root, near);
  EXPECT_EQ(paths[0].blocks, std::vector<uint32_t>{target});
  EXPECT_EQ(paths[1].root, far);
  EXPECT_EQ(paths[1].blocks, (std::vector<uint32_t>{a, target}));
  EXPECT_EQ(shortest_paths(g, targets, 1).size(), 1u);
}

TEST(Paths, SeveralTargetsAndCycles) {
  SnapshotBuilder s;
  const uint32_t r = s.root("r");
  const uint32_t x = s.block(8), y = s.block(8), t1 = s.block(8), t2 = s.block(8);
  s.root_edge(r, x);
  s.block_edge(x, y);
  s.block_edge(y, x);
  s.block_edge(y, t2);
  s.block_edge(t2, t1);
  const HeapSnapshot snap = s.build();
  const NodeGraph g = build_node_graph(snap);
  const uint32_t targets[] = {t1, t2};
  const std::vector<RootPath> paths = shortest_paths(g, targets, 10);
  ASSERT_EQ(paths.size(), 1u);
  EXPECT_EQ(paths[0].blocks, (std::vector<uint32_t>{x, y, t2}));
}

TEST(Paths, LeakedTargetHasNoPath) {
  SnapshotBuilder s;
  s.root("r");
  const uint32_t lost = s.block(8), holder = s.block(8);
  s.block_edge(holder, lost);
  const HeapSnapshot snap = s.build();
  const NodeGraph g = build_node_graph(snap);
  const uint32_t targets[] = {lost, 99};  // an index past the blocks is ignored
  EXPECT_TRUE(shortest_paths(g, targets, 10).empty());
}

// On random graphs: every root that reaches a target gets a path, each path
// follows real edges from its root to a target, and its length is the root's
// breadth-first distance to the nearest target.
TEST(Paths, ShortestOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    std::mt19937_64 rng(seed);
    auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
    const HeapSnapshot snap = testing::random_graph(rng, 6, 50, /*interior=*/false).build();
    const uint32_t roots = static_cast<uint32_t>(snap.roots.size()), blocks = static_cast<uint32_t>(snap.blocks.size());
    std::vector<uint32_t> targets;
    for (uint32_t k = uniform(1, 3); k-- > 0;) targets.push_back(uniform(0, blocks - 1));
    const std::set<uint32_t> target_set(targets.begin(), targets.end());
    const NodeGraph g = build_node_graph(snap);
    const std::vector<RootPath> paths = shortest_paths(g, targets, roots);

    std::set<uint32_t> with_path;
    for (const RootPath& p : paths) {
      with_path.insert(p.root);
      ASSERT_FALSE(p.blocks.empty());
      ASSERT_TRUE(target_set.contains(p.blocks.back())) << "seed " << seed;
      uint32_t from = g.vertex_of_root(p.root);
      for (uint32_t b : p.blocks) {
        const auto n = g.succ.neighbours(from);
        ASSERT_NE(std::find(n.begin(), n.end(), g.vertex_of_block(b)), n.end()) << "seed " << seed;
        from = g.vertex_of_block(b);
      }
    }
    for (uint32_t r = 0; r < roots; ++r) {
      // Forward breadth-first distance from r to the nearest target.
      std::vector<uint32_t> dist(g.vertex_count(), UINT32_MAX), queue{g.vertex_of_root(r)};
      dist[queue[0]] = 0;
      uint32_t nearest = UINT32_MAX;
      for (size_t head = 0; head < queue.size() && nearest == UINT32_MAX; ++head) {
        for (uint32_t w : g.succ.neighbours(queue[head])) {
          if (dist[w] != UINT32_MAX) continue;
          dist[w] = dist[queue[head]] + 1;
          if (target_set.contains(g.block_of(w))) nearest = std::min(nearest, dist[w]);
          queue.push_back(w);
        }
      }
      ASSERT_EQ(with_path.contains(r), nearest != UINT32_MAX) << "seed " << seed << " root " << r;
      for (const RootPath& p : paths) {
        if (p.root == r) {
          ASSERT_EQ(p.blocks.size(), nearest) << "seed " << seed << " root " << r;
        }
      }
    }
    // Nearest roots first.
    for (size_t i = 1; i < paths.size(); ++i) ASSERT_LE(paths[i - 1].blocks.size(), paths[i].blocks.size());
  }
}

}  // namespace
}  // namespace memloupe::retention
