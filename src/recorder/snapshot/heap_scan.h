// The conservative scan: every aligned word of a range that holds an address
// inside a live block (at its start or anywhere before its end) is an edge to
// that block. Blocks are a sorted array, found by binary search: O(words x log
// blocks), as memcheck's leak check.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/snapshot_writer.h"
#include "recorder/sys.h"

namespace memloupe::recorder::snapshot {

struct LiveBlock {
  uint64_t address = 0;
  uint64_t end = 0;  // address + extent scanned (at least 1 byte, as memcheck)
  uint64_t alloc_id = 0;
};

class HeapScan {
 public:
  // `blocks` sorted by address, non-overlapping; owned by the caller.
  // Nodes below `roots` are roots: their edges keep the word's offset and are
  // not merged (the loader splits a root by those offsets).
  HeapScan(const LiveBlock* blocks, size_t count, uint32_t roots, format::SnapshotWriter& out) noexcept;

  // Emits the edges from node `from` found in the words of [begin, end), a part
  // of the root or block that starts at `base` (offsets are from there).
  void scan_range(uint32_t from, uintptr_t begin, uintptr_t end, uintptr_t base) noexcept;
  void scan_range(uint32_t from, uintptr_t begin, uintptr_t end) noexcept { scan_range(from, begin, end, begin); }
  // Emits the edges from node `from` found among `n` register values.
  void scan_words(uint32_t from, const uint64_t* words, size_t n) noexcept;

  uint64_t bytes_scanned() const noexcept { return bytes_; }

 private:
  void word(uint32_t from, uint64_t w, uint64_t offset) noexcept;
  void emit(uint32_t from, uint32_t to, uint64_t w, uint64_t offset) noexcept;
  // The targets the current block node already has an edge to, start and
  // interior apart (two bits per block, in an mmap'd bitmap): each block gets
  // one edge per (target, kind), however many words point there. Cleared bit
  // by bit through the list of targets set, or wholesale when that overflows.
  // Without memory for the bitmap, nothing is merged here; the loader merges.
  static constexpr size_t kTouched = 1 << 14;
  void new_node(uint32_t from) noexcept;
  bool first_edge(uint32_t to, bool interior) noexcept;

  const LiveBlock* blocks_;
  size_t count_;
  uint32_t roots_;
  uint64_t lo_ = 0, hi_ = 0;
  size_t last_ = 0;  // the block the previous hit was in
  format::SnapshotWriter& out_;
  uint32_t node_ = UINT32_MAX;
  Mapping seen_map_;
  uint64_t* seen_ = nullptr;  // bit 2b: a start edge to block b; 2b+1: an interior one
  size_t seen_words_ = 0;
  Mapping touched_map_;
  uint32_t* touched_ = nullptr;
  size_t n_touched_ = 0;
  bool overflow_ = false;
  uint64_t bytes_ = 0;
};

}  // namespace memloupe::recorder::snapshot
