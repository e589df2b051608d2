// Reads the heap snapshots a trace holds (ChunkType::Snapshot chunks written by
// the recorder's scan, with the finaliser's annex) and names their roots:
// globals through the names the finaliser stored or the ELF symbol tables of
// the modules the trace recorded, stack frames by the function their pc falls
// in. Also what names the blocks: each one's allocation backtrace. The graph
// side (dominators, leak kinds) consumes the snapshots.
//
// A finalised trace's snapshots carry their blocks' requested sizes and
// backtraces, the modules and the threads in their annex, so nothing but the
// snapshot chunks and the symbols section is read. Snapshots without a
// complete annex (finalised before it existed, not finalised, or a damaged
// annex) get them from one pass over the events, found by allocation id.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "reader/reader.h"
#include "reader/snapshot_decoder.h"
#include "retention/heap_graph.h"
#include "symbolize/module_map.h"
#include "symbolize/snapshot_sites.h"

namespace memloupe::retention {

struct SnapshotSet {
  std::vector<HeapSnapshot> snapshots;  // in the order they were taken
  // What names the blocks and the roots' threads and modules in the views:
  std::vector<symbolize::BlockSites> sites;  // per snapshot, its blocks' backtraces
  std::vector<symbolize::Module> modules;    // every module load of the trace, in order
  std::vector<reader::RawSnapshotThread> threads;  // by id
  reader::SymbolTable symbols;               // the trace's symbols section
  bool read_events = false;  // some snapshot had no annex: the events were read
  std::string damage;  // empty, or what was damaged and at which offset; the
                       // snapshots before (and any after) the damage are kept
};

// Never throws on bad bytes: an unreadable trace gives no snapshots and says
// why in `damage`.
SnapshotSet load_snapshots(const std::filesystem::path& trace);

}  // namespace memloupe::retention
