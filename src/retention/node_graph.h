// The heap snapshot as a graph the algorithms walk: compressed adjacency lists
// (successors and predecessors) with a virtual super-root in front.
//
// Graph vertices shift the snapshot's node numbers (heap_graph.h) by one:
//     vertex 0                      the super-root, with an edge to every root
//     vertex 1 + node               snapshot node `node` (roots, then blocks)
// so every root is reached from the super-root only, as Eclipse MAT's virtual
// root does, and "dominated by the super-root alone" means "held by no single
// root". Edges whose ends are out of range (a damaged snapshot) are dropped and
// counted, never followed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "retention/heap_graph.h"

namespace memloupe::retention {

inline constexpr uint32_t kSuperRoot = 0;
inline constexpr uint32_t kNoVertex = UINT32_MAX;

// One direction of the edges, compressed: the neighbours of v are
// to[begin[v] .. begin[v+1]), each with its interior flag at the same index.
struct Adjacency {
  std::vector<uint64_t> begin;  // vertex_count + 1 offsets
  std::vector<uint32_t> to;
  std::vector<uint8_t> interior;  // 1: the pointer was interior (heap_graph.h Edge)

  std::span<const uint32_t> neighbours(uint32_t v) const {
    return {to.data() + begin[v], static_cast<size_t>(begin[v + 1] - begin[v])};
  }
  std::span<const uint8_t> interior_of(uint32_t v) const {
    return {interior.data() + begin[v], static_cast<size_t>(begin[v + 1] - begin[v])};
  }
};

struct NodeGraph {
  uint32_t roots = 0;   // snapshot roots; vertices 1 .. roots
  uint32_t blocks = 0;  // snapshot blocks; vertices roots+1 .. roots+blocks
  Adjacency succ;
  Adjacency pred;
  uint64_t dropped_edges = 0;  // out-of-range edges of a damaged snapshot

  uint32_t vertex_count() const { return 1 + roots + blocks; }
  uint32_t vertex_of_root(uint32_t r) const { return 1 + r; }
  uint32_t vertex_of_block(uint32_t b) const { return 1 + roots + b; }
  bool is_block(uint32_t v) const { return v > roots && v != kNoVertex; }
  bool is_root(uint32_t v) const { return v >= 1 && v <= roots; }
  uint32_t block_of(uint32_t v) const { return v - 1 - roots; }
  uint32_t root_of(uint32_t v) const { return v - 1; }
};

// Builds both directions in O(vertices + edges) by counting sort, so it does not
// rely on the snapshot's edge order.
NodeGraph build_node_graph(const HeapSnapshot& snapshot);

}  // namespace memloupe::retention
