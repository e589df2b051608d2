// Memcheck's leak kinds for the blocks of one snapshot, computed the way
// valgrind's memcheck/mc_leakcheck.c computes them, so the figures can be
// compared with its LEAK SUMMARY:
//
//   still reachable  a path from a root on which every pointer points at the
//                    start of its block ("start pointers")
//   possibly lost    reachable from a root, but every such path has an
//                    interior pointer somewhere on it
//   definitely lost  reached from no root, and the leader of its clique
//   indirectly lost  reached from no root, but from a definitely lost block
//
// Cliques: memcheck visits the unreached blocks in address order. The first
// one not yet claimed becomes a leader (definitely lost) and claims, through
// pointers of any kind, every unreached block it reaches; a leader claimed by
// a later leader becomes indirectly lost. So a leaked ring counts its
// lowest-addressed block as definitely lost and the rest as indirectly lost,
// and a leaked list its head. Blocks are sorted by address (heap_graph.h), so
// address order is block order.
//
// Memcheck can also accept some interior pointers as start pointers
// (--leak-check-heuristics: stdstring, length64, newarray,
// multipleinheritance, all on by default). That needs the block's contents,
// which only the scan sees: an edge the scan marks interior is interior here.
#pragma once

#include <cstdint>
#include <vector>

#include "retention/amount.h"
#include "retention/heap_graph.h"
#include "retention/node_graph.h"

namespace memloupe::retention {

enum class LeakKind : uint8_t { StillReachable, PossiblyLost, IndirectlyLost, DefinitelyLost };
const char* leak_kind_name(LeakKind kind);  // "still reachable", "possibly lost", ...

struct LeakSummary {
  Amount definitely_lost;
  Amount indirectly_lost;
  Amount possibly_lost;
  Amount still_reachable;

  Amount& operator[](LeakKind kind);
  const Amount& operator[](LeakKind kind) const;
};

struct LeakKinds {
  std::vector<LeakKind> of_block;  // indexed by block
  LeakSummary summary;
};

LeakKinds classify_leaks(const HeapSnapshot& snapshot, const NodeGraph& graph);

}  // namespace memloupe::retention
