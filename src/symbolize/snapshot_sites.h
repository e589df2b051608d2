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

// `Stack`: a backtrace's frames, owned (the loader's) or seen (the annex's,
// while the SnapshotSites lives).
template <class Stack>
struct BlockSitesOf {
  std::vector<Stack> stacks;            // distinct backtraces, innermost first
  std::vector<uint32_t> stack_plus_one;  // per block: index in `stacks` + 1; 0: no Alloc event
  std::vector<uint64_t> size;            // per block: requested bytes (when it has a stack)
};
using BlockSites = BlockSitesOf<std::vector<uint64_t>>;
using BlockSiteViews = BlockSitesOf<std::span<const uint64_t>>;

class SnapshotSites {
 public:
  explicit SnapshotSites(const reader::RawSnapshots& raw);

  // Every event, in file order.
  void add(const format::Event& event);
  // Instead of the Allocs (and in any order): a block's allocation id, requested
  // size and backtrace, as its Alloc gave them (a follower keeps the blocks
  // still live at the end: finalize.cc).
  void add_block(uint64_t id, uint64_t size, std::span<const uint64_t> backtrace);
  // add_block() from a table of stacks (AggregateBuilder's live blocks):
  // `stack` is the table's number of `backtrace`, whose frames the table's
  // other numbers do not repeat, and which stays valid while this object is
  // used. A number seen before is neither hashed nor compared again, nor its
  // frames copied (~50 k blocks live at cc1plus's exit, after which this runs).
  void add_table_block(uint64_t id, uint64_t size, uint32_t stack, std::span<const uint64_t> backtrace);
  // Every block of every snapshot has its size and backtrace.
  bool complete() const;

  // Of raw.snapshots[i]; its stacks numbered in the order its blocks first use them.
  BlockSites sites(size_t i) const;
  // The same, the stacks seen where this object keeps them (the annex's
  // writer reads them: no copy of each).
  BlockSiteViews site_views(size_t i) const;
  // Every thread the events named, by id; names are the last given.
  std::vector<reader::RawSnapshotThread> threads() const;

 private:
  // Where an allocation id is in `ids_`, or SIZE_MAX.
  size_t wanted(uint64_t id);
  // The index in stacks_ of a backtrace (cut to the annex's limit), added if
  // new: its frames are copied unless `seen` (a table's, which outlive this use).
  uint32_t stack_of(std::span<const uint64_t> backtrace, bool seen = false);

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
  // A table's stack shorter than the annex's limit has frames no other of its
  // numbers has, and none of its cut ones (which have the limit's length):
  // it is added without its hash, which add_block's backtraces (any length)
  // then need first (`unhashed_`).
  std::unordered_multimap<uint64_t, uint32_t> stack_index_;
  std::vector<uint32_t> unhashed_;  // indices in stacks_ not in stack_index_
  std::vector<std::span<const uint64_t>> stacks_;  // cut to the annex's limit
  std::vector<std::vector<uint64_t>> owned_;        // the frames of add_block's stacks (stacks_ sees them)
  std::vector<uint32_t> by_table_stack_;            // a table's stack number -> index in stacks_ + 1; 0: not seen
  std::map<uint32_t, reader::RawSnapshotThread> threads_;
};

}  // namespace memloupe::symbolize
