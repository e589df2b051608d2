// What names a heap snapshot's blocks, from the trace's events: each block's
// requested size and allocation backtrace (its Alloc event, found by the
// allocation id the snapshot recorded, never by address), and the threads'
// names. The finaliser stores it in the snapshot's annex (snapshot_roots.h);
// the loader (src/retention/snapshot_load.h) gathers it the same way from a
// trace finalised without one.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "format/events.h"
#include "reader/snapshot_decoder.h"

namespace memloupe::symbolize {

struct BlockSites {
  std::vector<std::vector<uint64_t>> stacks;  // distinct backtraces, innermost first
  std::vector<uint32_t> stack_plus_one;       // per block: index in `stacks` + 1; 0: no Alloc event
  std::vector<uint64_t> size;                 // per block: requested bytes (when it has a stack)
};

class SnapshotSites {
 public:
  explicit SnapshotSites(const reader::RawSnapshots& raw);

  // Every event, in file order.
  void add(const format::Event& event);
  // Instead of the Allocs (and in any order): a block's allocation id, requested
  // size and backtrace, as its Alloc gave them (a follower keeps the blocks
  // still live at the end: finalize.cc).
  void add_block(uint64_t id, uint64_t size, std::span<const uint64_t> backtrace);
  // add_block() from a table of stacks whose one stack is always the same span
  // (start and length) while this object lives, as AggregateBuilder's live
  // blocks give them: a span seen before is not hashed and compared again
  // (~50 k blocks live at cc1plus's exit, after which this runs).
  void add_table_block(uint64_t id, uint64_t size, std::span<const uint64_t> backtrace);
  // Every block of every snapshot has its size and backtrace.
  bool complete() const;

  // Of raw.snapshots[i]; its stacks numbered in the order its blocks first use them.
  BlockSites sites(size_t i) const;
  // Every thread the events named, by id; names are the last given.
  std::vector<reader::RawSnapshotThread> threads() const;

 private:
  // Where an allocation id is in `ids_`, or SIZE_MAX.
  size_t wanted(uint64_t id);
  // The index in stacks_ of a backtrace (cut to the annex's limit), added if new.
  uint32_t stack_of(std::span<const uint64_t> backtrace);

  std::vector<std::vector<uint64_t>> alloc_ids_;  // per snapshot, per block
  // The blocks' allocation ids, sorted and distinct, and what their Allocs said.
  std::vector<uint64_t> ids_;
  size_t cursor_ = 0;
  std::vector<uint32_t> stack_plus_one_;  // per id: index in stacks_ + 1; 0 while not seen
  std::vector<uint64_t> size_;
  // The distinct backtraces, by index, found by their hash (format/history.h's):
  // hashed once and compared with the few of the same hash, where an ordered
  // map compared frames ~17 times per block (~10% of what was left after the
  // exit of a program with ~70 k stacks, docs/RECORDER.md).
  std::unordered_multimap<uint64_t, uint32_t> stack_index_;
  std::vector<std::vector<uint64_t>> stacks_;
  // add_table_block's spans already seen, by their start: their length and index in stacks_.
  std::unordered_map<const uint64_t*, std::pair<size_t, uint32_t>> by_span_;
  std::map<uint32_t, reader::RawSnapshotThread> threads_;
};

}  // namespace memloupe::symbolize
