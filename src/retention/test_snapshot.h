// Hand-built heap snapshots for tests: roots and blocks by name, edges between
// them, then a HeapSnapshot laid out as the loader lays one out (blocks sorted
// by address, edges sorted by `from`, one edge per pair).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
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

}  // namespace memloupe::retention::testing
