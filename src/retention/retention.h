// The retention analysis of one heap snapshot: the dominator tree with the
// bytes each vertex retains, retained and reachable bytes per root, and
// memcheck's leak kinds (docs/RETENTION.md, "Reading a snapshot").
//
//   retained by X   the blocks that would become unreachable if X (a root, or
//                   a block) were cleared: X's subtree in the dominator tree.
//                   Retained sets of different roots never overlap.
//   reachable by X  every block a path of pointers leads to from X; these
//                   overlap between roots.
//   shared          the blocks dominated by the super-root alone (reachable
//                   from two or more roots, none of which holds them alone)
//                   and everything under them: retained by no single root.
//
// Interior pointers are edges like any other here: a conservative scan cannot
// tell a pointer into the middle of a block from a real reference (an array
// walked by a cursor, a base-class subobject), and treating it as one keeps
// "would be freed if cleared" on the safe side. Leak kinds do tell them apart
// (leak_kinds.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "retention/amount.h"
#include "retention/dominators.h"
#include "retention/heap_graph.h"
#include "retention/leak_kinds.h"
#include "retention/node_graph.h"

namespace memloupe::retention {

struct RootRetention {
  Amount retained;
  Amount reachable;
};

struct Retention {
  NodeGraph graph;
  Dominators dominators;
  // Per vertex: the vertex's own block (if it is one) plus everything it
  // dominates. For the super-root: every block reachable from a root.
  std::vector<Amount> retained;
  std::vector<RootRetention> roots;  // indexed by root
  Amount shared;
  LeakKinds leaks;

  // Children of `vertex` in the dominator tree, the largest retained first
  // (ties: lower vertex first). The super-root's children are the roots and the
  // shared blocks.
  // The retained bytes of several vertices together (a tree level's tail).
  Amount retained_sum(std::span<const uint32_t> vertices) const {
    Amount sum;
    for (uint32_t v : vertices) sum += retained[v];
    return sum;
  }

  std::span<const uint32_t> children(uint32_t vertex) const {
    return {children_.data() + child_begin_[vertex],
            static_cast<size_t>(child_begin_[vertex + 1] - child_begin_[vertex])};
  }

 private:
  friend Retention analyze_retention(const HeapSnapshot& snapshot);
  std::vector<uint64_t> child_begin_;
  std::vector<uint32_t> children_;
};

Retention analyze_retention(const HeapSnapshot& snapshot);

// The block containing `address` (a block of size 0 counts as one byte, as in
// memcheck), or nothing.
std::optional<uint32_t> block_at(const HeapSnapshot& snapshot, uint64_t address);

}  // namespace memloupe::retention
