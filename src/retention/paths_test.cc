#include "retention/paths.h"

#include <gtest/gtest.h>

#include "retention/test_snapshot.h"

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

}  // namespace
}  // namespace memloupe::retention
