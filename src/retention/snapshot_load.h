// Reads the heap snapshots a trace holds (ChunkType::Snapshot chunks written by
// the recorder's scan) and names their roots: globals through the ELF symbol
// tables of the modules the trace recorded, stack frames by the function their
// pc falls in. The graph side (dominators, leak kinds) consumes the result.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "retention/heap_graph.h"

namespace memloupe::retention {

struct SnapshotSet {
  std::vector<HeapSnapshot> snapshots;  // in the order they were taken
  std::string damage;  // empty, or what was damaged and at which offset; the
                       // snapshots before (and any after) the damage are kept
};

// Never throws on bad bytes: an unreadable trace gives no snapshots and says
// why in `damage`.
SnapshotSet load_snapshots(const std::filesystem::path& trace);

}  // namespace memloupe::retention
