// Memcheck's leak kinds on hand-built graphs, one per case of valgrind's
// memcheck/tests/leak-cases.c and of its clique rules, then the reachable
// kinds against their definition on random graphs.
#include <gtest/gtest.h>

#include <random>

#include "retention/leak_kinds.h"
#include "retention/node_graph.h"
#include "support/test_snapshot.h"

namespace memloupe::retention {
namespace {

using testing::SnapshotBuilder;

LeakKinds classify(const SnapshotBuilder& b) {
  const HeapSnapshot s = b.build();
  return classify_leaks(s, build_node_graph(s));
}

TEST(LeakKinds, StartPointerChainIsStillReachable) {
  SnapshotBuilder b;
  const uint32_t g = b.root("g");
  const uint32_t x = b.block(10), y = b.block(20);
  b.root_edge(g, x);
  b.block_edge(x, y);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[x], LeakKind::StillReachable);
  EXPECT_EQ(k.of_block[y], LeakKind::StillReachable);
  EXPECT_EQ(k.summary.still_reachable, (Amount{30, 2}));
  EXPECT_EQ(k.summary.definitely_lost, Amount{});
}

TEST(LeakKinds, UnpointedBlockIsDefinitelyLost) {
  SnapshotBuilder b;
  b.root("g");
  const uint32_t x = b.block(7);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[x], LeakKind::DefinitelyLost);
  EXPECT_EQ(k.summary.definitely_lost, (Amount{7, 1}));
}

TEST(LeakKinds, InteriorPointerFromRootIsPossiblyLostAndSoIsWhatItHolds) {
  SnapshotBuilder b;
  const uint32_t g = b.root("g");
  const uint32_t x = b.block(10), y = b.block(20);
  b.root_edge(g, x, /*interior=*/true);
  b.block_edge(x, y);  // a start pointer, but from a block that is only possibly reached
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[x], LeakKind::PossiblyLost);
  EXPECT_EQ(k.of_block[y], LeakKind::PossiblyLost);
  EXPECT_EQ(k.summary.possibly_lost, (Amount{30, 2}));
}

TEST(LeakKinds, InteriorPointerInsideAReachableChain) {
  SnapshotBuilder b;
  const uint32_t g = b.root("g");
  const uint32_t x = b.block(10), y = b.block(20);
  b.root_edge(g, x);
  b.block_edge(x, y, /*interior=*/true);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[x], LeakKind::StillReachable);
  EXPECT_EQ(k.of_block[y], LeakKind::PossiblyLost);
}

TEST(LeakKinds, AnyStartPointerChainMakesItReachableWhateverTheOrder) {
  // The root scan meets the interior pointer to p first; q (behind p) and p are
  // then reached by start pointers through r: both upgrade to still reachable.
  SnapshotBuilder b;
  const uint32_t g1 = b.root("first"), g2 = b.root("second");
  const uint32_t p = b.block(10), q = b.block(20), r = b.block(40);
  b.root_edge(g1, p, true);
  b.block_edge(p, q);
  b.root_edge(g2, r);
  b.block_edge(r, p);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[p], LeakKind::StillReachable);
  EXPECT_EQ(k.of_block[q], LeakKind::StillReachable);
  EXPECT_EQ(k.of_block[r], LeakKind::StillReachable);
  EXPECT_EQ(k.summary.possibly_lost, Amount{});
}

TEST(LeakKinds, LeakedRingLowestAddressLeads) {
  SnapshotBuilder b;
  b.root("g");
  const uint32_t a = b.block(16), c = b.block(32), d = b.block(64);
  b.block_edge(d, a);
  b.block_edge(a, c);
  b.block_edge(c, d);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[a], LeakKind::DefinitelyLost);
  EXPECT_EQ(k.of_block[c], LeakKind::IndirectlyLost);
  EXPECT_EQ(k.of_block[d], LeakKind::IndirectlyLost);
  EXPECT_EQ(k.summary.definitely_lost, (Amount{16, 1}));
  EXPECT_EQ(k.summary.indirectly_lost, (Amount{96, 2}));
}

TEST(LeakKinds, LaterLeaderTakesOverAnEarlierOne) {
  // head sits above its list in memory: the list's first node leads a clique
  // first, then head claims it.
  SnapshotBuilder b;
  b.root("g");
  const uint32_t n1 = b.block(8), n2 = b.block(8), head = b.block(100);
  b.block_edge(head, n1);
  b.block_edge(n1, n2);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[head], LeakKind::DefinitelyLost);
  EXPECT_EQ(k.of_block[n1], LeakKind::IndirectlyLost);
  EXPECT_EQ(k.of_block[n2], LeakKind::IndirectlyLost);
}

TEST(LeakKinds, CliqueMemberStopsALaterLeader) {
  // b0 <-> x is a clique led by b0; a later leaked block pointing at x finds x
  // already claimed and does not reach b0: both leaders stay definitely lost,
  // as in memcheck.
  SnapshotBuilder b;
  b.root("g");
  const uint32_t b0 = b.block(8), x = b.block(8), later = b.block(8);
  b.block_edge(b0, x);
  b.block_edge(x, b0);
  b.block_edge(later, x);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[b0], LeakKind::DefinitelyLost);
  EXPECT_EQ(k.of_block[x], LeakKind::IndirectlyLost);
  EXPECT_EQ(k.of_block[later], LeakKind::DefinitelyLost);
  EXPECT_EQ(k.summary.definitely_lost, (Amount{16, 2}));
}

TEST(LeakKinds, InteriorPointersCountInCliquesAndSelfEdgesDoNot) {
  SnapshotBuilder b;
  b.root("g");
  const uint32_t lost = b.block(8), inner = b.block(24), self = b.block(4);
  b.block_edge(lost, inner, /*interior=*/true);
  b.block_edge(self, self);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[lost], LeakKind::DefinitelyLost);
  EXPECT_EQ(k.of_block[inner], LeakKind::IndirectlyLost);
  EXPECT_EQ(k.of_block[self], LeakKind::DefinitelyLost);
}

TEST(LeakKinds, PointersFromLostBlocksDoNotRescueReachableOnes) {
  SnapshotBuilder b;
  const uint32_t g = b.root("g");
  const uint32_t kept = b.block(10), lost = b.block(20);
  b.root_edge(g, kept);
  b.block_edge(lost, kept);
  const LeakKinds k = classify(b);
  EXPECT_EQ(k.of_block[kept], LeakKind::StillReachable);
  EXPECT_EQ(k.of_block[lost], LeakKind::DefinitelyLost);
}

// On random graphs: still reachable is exactly "reachable over start pointers
// only", possibly lost "reachable, but not so", and every lost block is
// reached by no root.
TEST(LeakKinds, ReachableKindsMatchTheirDefinitionOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    const HeapSnapshot s = testing::random_graph(rng, 4, 60, /*interior=*/true).build();
    const NodeGraph g = build_node_graph(s);
    const LeakKinds k = classify_leaks(s, g);

    auto closure = [&](bool start_only) {
      std::vector<bool> seen(g.vertex_count(), false);
      std::vector<uint32_t> stack{kSuperRoot};
      while (!stack.empty()) {
        const uint32_t v = stack.back();
        stack.pop_back();
        for (size_t i = 0; i < g.succ.neighbours(v).size(); ++i) {
          const uint32_t w = g.succ.neighbours(v)[i];
          if (seen[w] || (start_only && g.succ.interior_of(v)[i])) continue;
          seen[w] = true;
          stack.push_back(w);
        }
      }
      return seen;
    };
    const std::vector<bool> strong = closure(true), any = closure(false);
    Amount lost;
    for (uint32_t i = 0; i < g.blocks; ++i) {
      const uint32_t v = g.vertex_of_block(i);
      const LeakKind expected = strong[v] ? LeakKind::StillReachable
                                : any[v]  ? LeakKind::PossiblyLost
                                          : k.of_block[i];
      ASSERT_EQ(k.of_block[i], expected) << "seed " << seed << " block " << i;
      if (!any[v]) {
        ASSERT_TRUE(k.of_block[i] == LeakKind::DefinitelyLost || k.of_block[i] == LeakKind::IndirectlyLost);
        lost.add(s.blocks[i].size);
      }
    }
    Amount counted = k.summary.definitely_lost;
    counted += k.summary.indirectly_lost;
    ASSERT_EQ(counted, lost) << "seed " << seed;
  }
}

}  // namespace
}  // namespace memloupe::retention
