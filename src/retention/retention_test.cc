// Retained and reachable bytes on a hand-built snapshot shaped like issue 14's
// test program: globals holding containers, a pointer chain, two globals
// sharing one block, a stack frame holding a buffer, a thread's TLS, a leaked
// ring and a block reached only through an interior pointer.
#include <gtest/gtest.h>

#include "retention/retention.h"
#include "support/test_snapshot.h"

namespace memloupe::retention {
namespace {

using testing::SnapshotBuilder;

struct Program {
  HeapSnapshot snapshot;
  uint32_t map, head, a, b, frame, tls, cursor, regs;
  uint32_t container, node1, node2, c1, c2, c3, shared, shared_child, buffer, tls_block, ring1, ring2,
      ring3, interior_only;
};

Program program() {
  SnapshotBuilder s;
  Program p{};
  p.map = s.root("g_map");
  p.head = s.root("g_head");
  p.a = s.root("g_a");
  p.b = s.root("g_b");
  p.frame = s.root("fill_buffer", RootKind::Stack);
  p.tls = s.root("tls", RootKind::Tls);
  p.cursor = s.root("g_cursor");
  p.regs = s.root("registers", RootKind::Register);
  p.container = s.block(64);
  p.node1 = s.block(32);
  p.node2 = s.block(32);
  p.c1 = s.block(16);
  p.c2 = s.block(16);
  p.c3 = s.block(16);
  p.shared = s.block(100);
  p.shared_child = s.block(50);
  p.buffer = s.block(4096);
  p.tls_block = s.block(24);
  p.ring1 = s.block(8);
  p.ring2 = s.block(8);
  p.ring3 = s.block(8);
  p.interior_only = s.block(40);
  s.root_edge(p.map, p.container);
  s.block_edge(p.container, p.node1);
  s.block_edge(p.container, p.node2);
  s.block_edge(p.node1, p.node2);  // a sibling link does not change who retains node2
  s.root_edge(p.head, p.c1);
  s.block_edge(p.c1, p.c2);
  s.block_edge(p.c2, p.c3);
  s.root_edge(p.a, p.shared);
  s.root_edge(p.b, p.shared);
  s.block_edge(p.shared, p.shared_child);
  s.root_edge(p.frame, p.buffer);
  s.root_edge(p.tls, p.tls_block);
  s.block_edge(p.ring1, p.ring2);
  s.block_edge(p.ring2, p.ring3);
  s.block_edge(p.ring3, p.ring1);
  s.root_edge(p.cursor, p.interior_only, /*interior=*/true);
  p.snapshot = s.build();
  return p;
}

TEST(Retention, RetainedAndReachablePerRoot) {
  const Program p = program();
  const Retention r = analyze_retention(p.snapshot);
  EXPECT_EQ(r.roots[p.map].retained, (Amount{128, 3}));
  EXPECT_EQ(r.roots[p.map].reachable, (Amount{128, 3}));
  EXPECT_EQ(r.roots[p.head].retained, (Amount{48, 3}));
  EXPECT_EQ(r.roots[p.head].reachable, (Amount{48, 3}));
  // Shared by two globals: reachable from both, retained by neither.
  EXPECT_EQ(r.roots[p.a].retained, Amount{});
  EXPECT_EQ(r.roots[p.a].reachable, (Amount{150, 2}));
  EXPECT_EQ(r.roots[p.b].retained, Amount{});
  EXPECT_EQ(r.roots[p.b].reachable, (Amount{150, 2}));
  EXPECT_EQ(r.shared, (Amount{150, 2}));
  EXPECT_EQ(r.roots[p.frame].retained, (Amount{4096, 1}));
  EXPECT_EQ(r.roots[p.tls].retained, (Amount{24, 1}));
  // An interior pointer still holds its block (retention.h).
  EXPECT_EQ(r.roots[p.cursor].retained, (Amount{40, 1}));
  EXPECT_EQ(r.roots[p.regs].retained, Amount{});
  EXPECT_EQ(r.roots[p.regs].reachable, Amount{});
  // Everything reachable, split into what single roots retain and what is shared.
  EXPECT_EQ(r.retained[kSuperRoot], (Amount{128 + 48 + 150 + 4096 + 24 + 40, 11}));
}

TEST(Retention, DominatorTreeUnderARoot) {
  const Program p = program();
  const Retention r = analyze_retention(p.snapshot);
  const NodeGraph& g = r.graph;
  const auto children = r.children(g.vertex_of_root(p.map));
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(children[0], g.vertex_of_block(p.container));
  const auto under = r.children(children[0]);
  ASSERT_EQ(under.size(), 2u);  // node2 is held by the container and node1: the container dominates it
  EXPECT_EQ(r.retained[g.vertex_of_block(p.c2)], (Amount{32, 2}));
  EXPECT_EQ(r.dominators.idom[g.vertex_of_block(p.shared)], kSuperRoot);
  EXPECT_EQ(r.dominators.idom[g.vertex_of_block(p.shared_child)], g.vertex_of_block(p.shared));
  EXPECT_EQ(r.dominators.idom[g.vertex_of_block(p.ring1)], kNoVertex);
  // The super-root's children, largest first: the frame's buffer leads.
  EXPECT_EQ(r.children(kSuperRoot)[0], g.vertex_of_root(p.frame));
}

TEST(Retention, LeakKinds) {
  const Program p = program();
  const Retention r = analyze_retention(p.snapshot);
  EXPECT_EQ(r.leaks.summary.definitely_lost, (Amount{8, 1}));
  EXPECT_EQ(r.leaks.summary.indirectly_lost, (Amount{16, 2}));
  EXPECT_EQ(r.leaks.summary.possibly_lost, (Amount{40, 1}));
  EXPECT_EQ(r.leaks.summary.still_reachable, (Amount{128 + 48 + 150 + 4096 + 24, 10}));
}

TEST(Retention, DamagedEdgesAreDroppedAndCounted) {
  Program p = program();
  p.snapshot.edges.push_back({p.snapshot.node_count(), 0, false});
  p.snapshot.edges.push_back({0, static_cast<uint32_t>(p.snapshot.blocks.size()), false});
  const Retention r = analyze_retention(p.snapshot);
  EXPECT_EQ(r.graph.dropped_edges, 2u);
  EXPECT_EQ(r.roots[p.map].retained, (Amount{128, 3}));
}

TEST(Retention, BlockAtAddress) {
  const Program p = program();
  const HeapSnapshot& s = p.snapshot;
  const Block& c = s.blocks[p.container];
  EXPECT_EQ(block_at(s, c.address), p.container);
  EXPECT_EQ(block_at(s, c.address + c.size - 1), p.container);
  EXPECT_EQ(block_at(s, c.address + c.size), std::nullopt);
  EXPECT_EQ(block_at(s, s.blocks[0].address - 1), std::nullopt);
  HeapSnapshot empty_block;
  empty_block.blocks.push_back({0x500, 0, {}});
  EXPECT_EQ(block_at(empty_block, 0x500), 0u);  // size 0 counts as one byte, as in memcheck
  EXPECT_EQ(block_at(empty_block, 0x501), std::nullopt);
}

}  // namespace
}  // namespace memloupe::retention
