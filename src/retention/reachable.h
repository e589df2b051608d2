// Reachable bytes per root: every block some path of pointers leads to from the
// root, whoever else also reaches it (so, unlike retained bytes, these overlap
// between roots and do not add up to the heap).
//
// One search per root would cost roots × heap. Instead the graph is condensed
// into strongly connected components (Tarjan's algorithm, iterative), whose
// DAG is walked in topological order carrying a bit mask of the roots that
// reach each component: O((V + E) · roots/64) word operations in all, in as
// few walks as a bounded mask memory (128 MiB) allows.
#pragma once

#include <vector>

#include "retention/amount.h"
#include "retention/heap_graph.h"
#include "retention/node_graph.h"

namespace memloupe::retention {

// Indexed by root.
std::vector<Amount> reachable_per_root(const HeapSnapshot& snapshot, const NodeGraph& graph);

}  // namespace memloupe::retention
