// Hand-built heap snapshots for tests: roots and blocks by name, edges between
// them, then a HeapSnapshot laid out as the loader lays one out (blocks sorted
// by address, edges sorted by `from`, one edge per pair).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "retention/heap_graph.h"

namespace memloupe::retention::testing {

class SnapshotBuilder {
 public:
  // Blocks get addresses in the order they are added, 0x10000 apart, so the
  // first block added has the lowest address.
  uint32_t block(uint64_t size, uint64_t alloc_id = UINT64_MAX) {
    const uint32_t b = static_cast<uint32_t>(s_.blocks.size());
    s_.blocks.push_back({0x100000 + 0x10000 * uint64_t{b}, size,
                         format::AllocId{alloc_id == UINT64_MAX ? b : alloc_id}});
    return b;
  }
  uint32_t root(std::string name, RootKind kind = RootKind::Global) {
    Root r;
    r.kind = kind;
    r.name = std::move(name);
    s_.roots.push_back(std::move(r));
    return static_cast<uint32_t>(s_.roots.size()) - 1;
  }
  // Roots must all be added before the first edge (node numbers depend on it).
  void root_edge(uint32_t root, uint32_t block, bool interior = false) { edges_.insert({{root, block}, interior}); }
  void block_edge(uint32_t from, uint32_t to, bool interior = false) {
    edges_.insert({{static_cast<uint32_t>(s_.roots.size()) + from, to}, interior});
  }

  HeapSnapshot build() const {
    HeapSnapshot s = s_;
    for (const auto& [key, interior] : edges_) s.edges.push_back({key.first, key.second, interior});
    return s;
  }
  HeapSnapshot& base() { return s_; }

 private:
  HeapSnapshot s_;
  std::map<std::pair<uint32_t, uint32_t>, bool> edges_;  // ordered: sorted by from
};

// A seeded random graph: 1..max_roots roots, 1..max_blocks blocks of 0..50
// bytes, up to two edges per block (one in five from a root; with `interior`,
// one in three interior). Self-edges and repeated pairs come as they fall.
inline SnapshotBuilder random_graph(std::mt19937_64& rng, uint32_t max_roots, uint32_t max_blocks, bool interior) {
  auto uniform = [&](uint32_t lo, uint32_t hi) { return std::uniform_int_distribution<uint32_t>(lo, hi)(rng); };
  SnapshotBuilder b;
  const uint32_t roots = uniform(1, max_roots), blocks = uniform(1, max_blocks);
  for (uint32_t r = 0; r < roots; ++r) b.root("r" + std::to_string(r));
  for (uint32_t i = 0; i < blocks; ++i) b.block(uniform(0, 50));
  for (uint32_t e = uniform(0, blocks * 2); e-- > 0;) {
    const bool inside = interior && uniform(0, 2) == 0;
    if (uniform(0, 4) == 0) {
      b.root_edge(uniform(0, roots - 1), uniform(0, blocks - 1), inside);
    } else {
      b.block_edge(uniform(0, blocks - 1), uniform(0, blocks - 1), inside);
    }
  }
  return b;
}

}  // namespace memloupe::retention::testing
