// The dominator tree, retained bytes and reachable bytes against brute force on
// seeded random graphs: "clear this vertex, recompute reachability, see what
// fell off". Graph shapes mix long chains, cycles, blocks shared between roots,
// self-edges, interior edges, unreachable parts and over 64 roots (so the
// reachability masks need several groups); some pairs get both a start and an
// interior edge, which the analysis takes as the loader may give them.
#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <set>

#include "retention/dominators.h"
#include "retention/retention.h"

namespace memloupe::retention {
namespace {

HeapSnapshot random_snapshot(std::mt19937_64& rng) {
  auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  HeapSnapshot s;
  const uint32_t roots = uniform(0, 5) == 0 ? uniform(65, 140) : uniform(1, 8);
  const uint32_t blocks = uniform(0, 90);
  s.roots.resize(roots);
  for (uint32_t b = 0; b < blocks; ++b) s.blocks.push_back({0x1000 + 0x100 * uint64_t{b}, uniform(0, 200), {b}});
  std::set<std::pair<uint32_t, uint32_t>> edges;
  auto block_node = [&](uint32_t b) { return roots + b; };
  if (blocks > 0) {
    const uint32_t shape = uniform(0, 3);
    // Long chains: runs of consecutive blocks, forward or backward in address.
    for (uint32_t chains = uniform(0, 3); chains-- > 0;) {
      uint32_t a = uniform(0, blocks - 1), len = uniform(1, blocks);
      const bool backward = uniform(0, 1) == 1;
      for (uint32_t i = 0; i + 1 < len; ++i) {
        const uint32_t x = (a + i) % blocks, y = (a + i + 1) % blocks;
        edges.insert(backward ? std::pair{block_node(y), x} : std::pair{block_node(x), y});
      }
      edges.insert({uniform(0, roots - 1), a});
    }
    // Cycles.
    for (uint32_t cycles = uniform(0, 2); cycles-- > 0;) {
      const uint32_t len = uniform(1, std::min<uint32_t>(blocks, 8));
      std::vector<uint32_t> members;
      for (uint32_t i = 0; i < len; ++i) members.push_back(uniform(0, blocks - 1));
      for (uint32_t i = 0; i < len; ++i) edges.insert({block_node(members[i]), members[(i + 1) % len]});
    }
    // Random edges: sparse or dense, from roots and blocks (self-edges included).
    const uint32_t extra = shape == 0 ? blocks / 2 : shape == 1 ? blocks * 2 : blocks * 4;
    for (uint32_t i = 0; i < extra; ++i) {
      const uint32_t from = uniform(0, 4) == 0 ? uniform(0, roots - 1) : block_node(uniform(0, blocks - 1));
      edges.insert({from, uniform(0, blocks - 1)});
    }
    // Self-edges and blocks shared by several roots.
    for (uint32_t i = uniform(0, 3); i-- > 0;) {
      const uint32_t b = uniform(0, blocks - 1);
      edges.insert({block_node(b), b});
    }
    for (uint32_t i = uniform(0, 3); i-- > 0;) {
      const uint32_t b = uniform(0, blocks - 1);
      for (uint32_t k = uniform(2, 4); k-- > 0;) edges.insert({uniform(0, roots - 1), b});
    }
  }
  for (const auto& [from, to] : edges) {
    const bool interior = uniform(0, 3) == 0;
    s.edges.push_back({from, to, interior});
    if (uniform(0, 9) == 0) s.edges.push_back({from, to, !interior});
  }
  return s;
}

// Vertices reachable from the super-root with `removed` taken out of the graph.
std::vector<bool> reachable_without(const NodeGraph& g, uint32_t removed, uint32_t start = kSuperRoot) {
  std::vector<bool> seen(g.vertex_count(), false);
  if (start == removed) return seen;
  std::vector<uint32_t> stack{start};
  seen[start] = true;
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    for (uint32_t w : g.succ.neighbours(v)) {
      if (w == removed || seen[w]) continue;
      seen[w] = true;
      stack.push_back(w);
    }
  }
  return seen;
}

void check_against_brute_force(const HeapSnapshot& s) {
  const Retention ret = analyze_retention(s);
  const NodeGraph& g = ret.graph;
  const uint32_t n = g.vertex_count();
  const std::vector<bool> all = reachable_without(g, kNoVertex);

  // dominated_by[d][v]: clearing d cuts v off.
  std::vector<std::vector<bool>> cut(n);
  for (uint32_t d = 0; d < n; ++d) cut[d] = reachable_without(g, d);
  std::vector<uint32_t> dominator_count(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t d = 0; d < n; ++d) dominator_count[v] += all[v] && d != v && !cut[d][v];
  }
  for (uint32_t v = 0; v < n; ++v) {
    uint32_t expected = kNoVertex;
    if (all[v] && v != kSuperRoot) {
      // Dominators form a chain; the immediate one is the deepest.
      for (uint32_t d = 0; d < n; ++d) {
        if (d == v || cut[d][v]) continue;
        if (expected == kNoVertex || dominator_count[d] > dominator_count[expected]) expected = d;
      }
    }
    ASSERT_EQ(ret.dominators.idom[v], expected) << "vertex " << v;

    // Retained: what clearing v cuts off (v itself included when it is a block).
    Amount retained;
    if (all[v]) {
      for (uint32_t w = 0; w < n; ++w) {
        if (g.is_block(w) && (w == v || (all[w] && !cut[v][w]))) retained.add(s.blocks[g.block_of(w)].size);
      }
    }
    ASSERT_EQ(ret.retained[v], retained) << "vertex " << v;
  }

  Amount single;  // retained by some root alone
  for (uint32_t r = 0; r < g.roots; ++r) {
    const uint32_t rv = g.vertex_of_root(r);
    const std::vector<bool> from_root = reachable_without(g, kNoVertex, rv);
    Amount reachable;
    for (uint32_t w = 0; w < n; ++w) {
      if (g.is_block(w) && from_root[w]) reachable.add(s.blocks[g.block_of(w)].size);
    }
    ASSERT_EQ(ret.roots[r].reachable, reachable) << "root " << r;
    ASSERT_EQ(ret.roots[r].retained, ret.retained[rv]) << "root " << r;
    single += ret.roots[r].retained;
  }
  Amount every;
  for (uint32_t w = 0; w < n; ++w) {
    if (g.is_block(w) && all[w]) every.add(s.blocks[g.block_of(w)].size);
  }
  EXPECT_EQ(ret.retained[kSuperRoot], every);
  single += ret.shared;
  EXPECT_EQ(single, every);

  // Children lists: the tree's edges, largest retained first.
  size_t children = 0;
  for (uint32_t v = 0; v < n; ++v) {
    uint64_t previous = UINT64_MAX;
    for (uint32_t c : ret.children(v)) {
      EXPECT_EQ(ret.dominators.idom[c], v);
      EXPECT_LE(ret.retained[c].bytes, previous);
      previous = ret.retained[c].bytes;
      ++children;
    }
  }
  EXPECT_EQ(children + 1, ret.dominators.preorder.size());
}

TEST(Dominators, MatchBruteForceOnRandomGraphs) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const HeapSnapshot s = random_snapshot(rng);
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_against_brute_force(s);
    if (HasFatalFailure()) return;
  }
}

TEST(Dominators, TextbookFlowGraph) {
  // Lengauer & Tarjan's example shape, as roots and blocks: R -> a, b; a -> c;
  // b -> c, d; c -> e; d -> e; e -> a (back edge). Only R dominates a, c and
  // e (each has two ways in); b alone leads to d.
  HeapSnapshot s;
  s.roots.resize(1);
  for (uint32_t b = 0; b < 5; ++b) s.blocks.push_back({0x1000 + 0x10 * uint64_t{b}, 10, {b}});
  enum { A, B, C, D, E };
  auto node = [](uint32_t b) { return 1 + b; };
  s.edges = {{0, A}, {0, B}, {node(A), C}, {node(B), C}, {node(B), D}, {node(C), E}, {node(D), E}, {node(E), A}};
  const Retention ret = analyze_retention(s);
  const NodeGraph& g = ret.graph;
  for (uint32_t b : {A, B, C, E}) EXPECT_EQ(ret.dominators.idom[g.vertex_of_block(b)], g.vertex_of_root(0));
  EXPECT_EQ(ret.dominators.idom[g.vertex_of_block(D)], g.vertex_of_block(B));
  EXPECT_EQ(ret.roots[0].retained, (Amount{50, 5}));
  EXPECT_EQ(ret.retained[g.vertex_of_block(B)], (Amount{20, 2}));
  EXPECT_EQ(ret.retained[g.vertex_of_block(A)], (Amount{10, 1}));
}

// A list far deeper than any call stack could recurse: a million blocks, each
// pointing at the next, some in falling address order. Nothing may recurse.
TEST(Dominators, MillionBlockListDoesNotRecurse) {
  constexpr uint32_t kBlocks = 1'000'000;
  HeapSnapshot s;
  s.roots.resize(1);
  s.blocks.reserve(kBlocks);
  for (uint32_t b = 0; b < kBlocks; ++b) s.blocks.push_back({0x10000 + 32 * uint64_t{b}, 16, {b}});
  s.edges.push_back({0, kBlocks - 1});
  // Node roots+b points at b-1: the list runs from the highest address down.
  for (uint32_t b = 1; b < kBlocks; ++b) s.edges.push_back({1 + b, b - 1});
  const Retention ret = analyze_retention(s);
  const NodeGraph& g = ret.graph;
  EXPECT_EQ(ret.roots[0].retained, (Amount{16ull * kBlocks, kBlocks}));
  EXPECT_EQ(ret.roots[0].reachable, (Amount{16ull * kBlocks, kBlocks}));
  EXPECT_EQ(ret.retained[g.vertex_of_block(1000)], (Amount{16 * 1001, 1001}));
  EXPECT_EQ(ret.dominators.idom[g.vertex_of_block(0)], g.vertex_of_block(1));
  EXPECT_EQ(ret.leaks.summary.still_reachable.blocks, kBlocks);

  // The same list leaked: one definitely lost head, the rest indirectly lost.
  // Memcheck visits them in address order, so each block in turn leads a
  // clique that the next one takes over: only the head stays definitely lost.
  s.edges.erase(s.edges.begin());
  const Retention leaked = analyze_retention(s);
  EXPECT_EQ(leaked.roots[0].retained, Amount{});
  EXPECT_EQ(leaked.leaks.summary.definitely_lost, (Amount{16, 1}));
  EXPECT_EQ(leaked.leaks.summary.indirectly_lost, (Amount{16ull * (kBlocks - 1), kBlocks - 1}));
  EXPECT_EQ(leaked.leaks.of_block[kBlocks - 1], LeakKind::DefinitelyLost);
}

}  // namespace
}  // namespace memloupe::retention
