// The finaliser's part in heap snapshots (docs/RETENTION.md): the stack
// frames' pcs go into the symbols section with the backtraces' return
// addresses, and each snapshot gets an annex (format/snapshot_wire.h): the
// global variables its roots hold pointers in, each block's requested size and
// allocation backtrace, the modules and the threads. The finalised trace then
// names its roots without the binaries, and its snapshots are read without a
// pass over the events.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/events.h"
#include "symbolize/global_names.h"
#include "symbolize/module_map.h"
#include "symbolize/snapshot_sites.h"
#include "symbolize/symbolizer.h"

namespace memloupe::symbolize {

class SnapshotRoots {
 public:
  // The snapshots of `trace` (none: every call below does nothing); damaged
  // ones are skipped (the loader reports them).
  explicit SnapshotRoots(std::span<const uint8_t> trace) : SnapshotRoots(reader::decode_snapshots(trace)) {}

  // Every event of the finaliser's first read, in file order (SnapshotSites::add).
  void add(const format::Event& event) { sites_.add(event); }
  // Or the blocks and the thread events without the Allocs (SnapshotSites::add_block).
  void add_block(uint64_t id, uint64_t size, std::span<const uint64_t> backtrace) {
    sites_.add_block(id, size, backtrace);
  }
  // Or from a table of stacks (SnapshotSites::add_table_block).
  void add_table_block(uint64_t id, uint64_t size, uint32_t stack, std::span<const uint64_t> backtrace) {
    sites_.add_table_block(id, size, stack, backtrace);
  }
  bool sites_complete() const { return sites_.complete(); }

  bool empty() const { return snapshots_.empty(); }

  // The stack frames' pcs, distinct, to symbolise with the backtraces.
  const std::vector<uint64_t>& frame_pcs() const { return frame_pcs_; }

  // The payloads of the Snapshot chunks to append: every snapshot's annex.
  // `modules`: the trace's, as the first read built them.
  std::vector<std::vector<uint8_t>> annex_chunks(const ModuleMap& modules, const SymbolizerOptions& options) const;
  // The same with a namer of one's own (one prepared ahead: prepared_symbolizers.h).
  std::vector<std::vector<uint8_t>> annex_chunks(const ModuleMap& modules, GlobalNamer& namer) const;
  // Names the global variables the roots point from now, for annex_chunks()
  // to take (with the same `modules`): the names need neither the sites nor
  // the events' end, so a finaliser names them while its index's worker
  // finishes the events.
  void name_globals(const ModuleMap& modules, GlobalNamer& namer);

 private:
  explicit SnapshotRoots(const reader::RawSnapshots& raw);

  struct Snapshot {
    uint32_t number = 0;
    std::vector<uint64_t> global_words;  // addresses of the pointer words in globals
  };
  // The variables holding `s`'s global words, by address.
  static std::vector<format::SnapshotName> names_of(const Snapshot& s, const ModuleMap& modules, GlobalNamer& namer);
  std::vector<Snapshot> snapshots_;
  std::vector<uint64_t> frame_pcs_;
  SnapshotSites sites_;
  std::vector<std::vector<format::SnapshotName>> names_;  // name_globals()'s, per snapshot
};

}  // namespace memloupe::symbolize
