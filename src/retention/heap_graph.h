// A heap snapshot as the retention analysis sees it: the live blocks, the named
// roots, and the pointer edges found by the conservative scan.
//
// Two sides meet here. The snapshot side (the recorder's scan, written into the
// trace, read back and named by snapshot_load) produces HeapSnapshot; the graph
// side (dominators, leak kinds, retained and reachable bytes) consumes it and
// knows nothing of how it was taken. Depends on the format only.
//
// Node numbering, used by every edge: roots first, then blocks.
//     node r               (0 <= r < roots.size())  is roots[r]
//     node roots.size()+b  (0 <= b < blocks.size()) is blocks[b]
// An edge's `to` is always a block index (not a node number): nothing points at
// a root.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/events.h"

namespace memloupe::retention {

enum class RootKind : uint8_t { Global, Stack, Register, Tls };

// One named root: a global variable (or, where no symbol covers the words, the
// writable segment of a module), one stack frame of one thread, one thread's
// register set, or one thread's TLS block.
struct Root {
  RootKind kind = RootKind::Global;
  std::string name;      // symbol; function for a stack frame; "registers"; "tls"
  std::string module;    // path of the module holding a global or TLS block; empty otherwise
  std::string file;      // source file of a global or of a frame's function, when known
  uint32_t line = 0;
  format::ThreadId thread{};  // stack, register and TLS roots
  uint64_t address = 0;  // first byte of the root's memory (0 for registers)
  uint64_t size = 0;     // bytes of the root's memory that were scanned
};

struct Block {
  uint64_t address = 0;
  uint64_t size = 0;           // requested bytes
  format::AllocId alloc{};     // the Alloc event that made it: its site and time
};

struct Edge {
  uint32_t from = 0;       // node number (see above)
  uint32_t to = 0;         // block index
  bool interior = false;   // the word pointed inside the block, not at its start
};

struct HeapSnapshot {
  std::string label;       // "exit", or the memloupe_snapshot() / signal label
  uint64_t time_ns = 0;    // trace time
  bool at_exit = false;
  std::vector<Root> roots;
  std::vector<Block> blocks;  // sorted by address, non-overlapping
  std::vector<Edge> edges;    // sorted by `from`; at most one edge per (from, to)

  [[nodiscard]] uint32_t node_of_block(uint32_t b) const {
    return static_cast<uint32_t>(roots.size()) + b;
  }
  [[nodiscard]] uint32_t node_count() const {
    return static_cast<uint32_t>(roots.size() + blocks.size());
  }
};

}  // namespace memloupe::retention
