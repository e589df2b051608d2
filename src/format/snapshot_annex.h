// The finaliser's annex to a heap snapshot (snapshot_wire.h): the globals its
// roots point from, and what names its blocks and roots (each block's
// requested size and backtrace, the modules, the threads), so that reading it
// needs no pass over the events. Uses the heap: the finaliser's side, kept
// apart from the recorder's heap-free writer (which the preload library links).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/snapshot_writer.h"

namespace memloupe::format {

// One named global (or section remainder) of a module, for the Names part.
struct SnapshotName {
  uint64_t address = 0, size = 0;
  std::string name, file;
  uint32_t line = 0;
};

// The payload of a chunk holding snapshot `number`'s Names part.
std::vector<uint8_t> snapshot_names_payload(uint32_t number, std::span<const SnapshotName> names);

struct SnapshotAnnex {
  std::span<const SnapshotName> names;
  std::span<const std::span<const uint64_t>> stacks;  // distinct backtraces, innermost first
  // Per block, in the snapshot's order: index in `stacks` + 1 (0: no Alloc
  // event known) and the requested size.
  std::span<const uint32_t> stack_plus_one;
  std::span<const uint64_t> size;
  std::span<const SnapshotModule> modules;  // every load, in order
  std::span<const SnapshotThread> threads;
};
// The chunk payloads of snapshot `number`'s annex, Names first.
std::vector<std::vector<uint8_t>> snapshot_annex_payloads(uint32_t number, const SnapshotAnnex& annex);

}  // namespace memloupe::format
