// Immediate dominators of the heap graph (node_graph.h: the super-root, then
// the roots, then the blocks).
//
// Vertex d dominates v when every path from the super-root to v passes through
// d: clearing d (a root, or a block's last pointer) would make v unreachable.
// The dominator tree gives each reachable vertex its immediate dominator; the
// retained bytes of a vertex are the bytes of its subtree.
//
// Algorithm: Lengauer–Tarjan with path compression and simple linking,
// O(E log V). Chosen over Cooper–Harvey–Kennedy because its bound holds on
// every graph: CHK iterates to a fixed point and can take O(V²) on graphs
// whose dominator tree is deep, and a heap of millions of blocks built as long
// lists and trees is exactly that shape. Eclipse MAT uses the same algorithm
// for multi-million-object Java heaps. Both the depth-first search and the
// path compression are written with explicit stacks: a linked list of a
// million blocks is a million-deep search, which would overflow the call stack
// if either recursed.
#pragma once

#include <cstdint>
#include <vector>

#include "retention/node_graph.h"

namespace memloupe::retention {

struct Dominators {
  // Per vertex: its immediate dominator; kNoVertex for the super-root and for
  // vertices the super-root does not reach (unreachable blocks).
  std::vector<uint32_t> idom;
  // The reachable vertices in depth-first preorder, the super-root first. A
  // vertex's immediate dominator is one of its depth-first ancestors, so it
  // comes earlier: walking this backwards visits children before parents.
  std::vector<uint32_t> preorder;
};

Dominators compute_dominators(const NodeGraph& graph);

}  // namespace memloupe::retention
