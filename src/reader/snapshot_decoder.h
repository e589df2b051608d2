// Decoding the heap snapshots of a memloupe trace (Snapshot chunks, layout in
// format/snapshot_wire.h) into their raw form: roots as addresses, blocks with
// the extent the recorder scanned, edges with their word offsets. Naming the
// roots and putting back requested sizes is the loader's job
// (src/retention/snapshot_load.h).
//
// Damage policy: a snapshot whose chunk is damaged (bad CRC, bad part, lost
// part) is dropped and the damage named with its file offset; the other
// snapshots of the trace are still decoded.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/snapshot_wire.h"

namespace memloupe::reader {

struct RawSnapshotRoot {
  format::SnapshotRoot kind = format::SnapshotRoot::Global;
  uint32_t thread_plus_one = 0;  // 0: a thread the trace never named
  uint32_t os_tid = 0;
  uint64_t address = 0, size = 0, pc = 0;
};

struct RawSnapshotBlock {
  uint64_t address = 0, extent = 0, alloc_id = 0;
};

struct RawSnapshotEdge {
  uint32_t from = 0, to = 0;  // node number (roots, then blocks); block index
  bool interior = false;
  uint64_t offset = 0;        // of the pointer word in its root (roots only)
};

// A global named by the finaliser (format/snapshot_wire.h, Names part).
struct RawSnapshotName {
  uint64_t address = 0, size = 0;
  std::string name, file;
  uint32_t line = 0;
};

// The rest of the finaliser's annex (format/snapshot_wire.h).
struct RawSnapshotSite {
  uint32_t stack_plus_one = 0;  // 0: the trace had no Alloc event for the block
  uint64_t size = 0;            // requested bytes
};
struct RawSnapshotModule {
  uint64_t start = 0, end = 0, load_bias = 0;
  std::string path;
  std::vector<uint8_t> build_id;
};
struct RawSnapshotThread {
  uint32_t id = 0, os_tid = 0;
  std::string name;
};

struct RawSnapshot {
  uint32_t number = 0;
  uint64_t time_ns = 0;
  bool at_exit = false;
  std::string label;
  uint32_t threads = 0, threads_not_stopped = 0;
  std::vector<RawSnapshotRoot> roots;
  std::vector<RawSnapshotBlock> blocks;
  std::vector<RawSnapshotEdge> edges;
  std::vector<RawSnapshotName> names;  // by address; empty before finalising
  // The annex: all four are filled exactly when `annexed` (a complete annex,
  // one site per block); otherwise they are empty and the events name the blocks.
  bool annexed = false;
  std::vector<std::vector<uint64_t>> stacks;  // innermost first
  std::vector<RawSnapshotSite> sites;
  std::vector<RawSnapshotModule> modules;
  std::vector<RawSnapshotThread> thread_names;
  uint64_t offset = 0;  // of its first chunk in the file
  // The scan's cost, as the recorder measured it.
  uint64_t bytes_scanned = 0;
  uint64_t stopped_ns = 0;  // how long the other threads were stopped
};

struct RawSnapshots {
  std::vector<RawSnapshot> snapshots;  // complete and intact ones, in trace order
  std::string damage;                  // empty, or each problem with its offset ("; "-separated)
};

// Appends one problem to a "; "-separated list of them.
void add_damage(std::string& all, const std::string& one);

// Every snapshot in the trace `file` (the whole file, prologue included).
RawSnapshots decode_snapshots(std::span<const uint8_t> file);

}  // namespace memloupe::reader
