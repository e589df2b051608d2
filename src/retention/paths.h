// Who holds this? The shortest chains of pointers from roots to a set of
// target blocks (one block, the block at an address, or every block of an
// allocation site), as MAT's "path to GC roots".
//
// One breadth-first search backwards from all targets at once (over the
// predecessor lists) gives every vertex its distance to the nearest target and
// a next hop towards it; each root that reaches a target then has a shortest
// path by following the hops. O(V + E), no recursion.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "retention/node_graph.h"

namespace memloupe::retention {

struct RootPath {
  uint32_t root = 0;             // index into HeapSnapshot::roots
  std::vector<uint32_t> blocks;  // block indices from the root's pointee to the target, inclusive
};

// At most `limit` paths, one per root, shortest first (ties: lower root
// first). Empty when no root reaches any target (the targets are leaked).
std::vector<RootPath> shortest_paths(const NodeGraph& graph, std::span<const uint32_t> target_blocks,
                                     size_t limit);

}  // namespace memloupe::retention
