// The finaliser's one read of the events: what symbolisation needs from them,
// with the tap's and the addon's work riding on it (finalize.h). Fed by
// whichever read delivers the events: the compaction's, a Reader's, or a
// follower's while the program runs (follow.h).
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "finalize/finalize.h"
#include "format/events.h"
#include "format/expected.h"
#include "reader/reader.h"
#include "symbolize/module_map.h"
#include "symbolize/snapshot_roots.h"

namespace memloupe::finalize {

// The module map over time and each distinct backtrace address with the
// module it was first seen in.
struct Collected {
  symbolize::ModuleMap modules;
  std::vector<symbolize::AddressInModule> addresses;
  uint64_t events = 0;
  std::optional<Error> damage;
  // A follower's read (which has no snapshots to feed: they come at the end):
  // the thread events, which the snapshots' annex names the threads by.
  std::vector<format::ThreadStart> thread_starts;
  std::vector<std::pair<format::ThreadId, std::string>> thread_names;
};

class Collector {
 public:
  // `snapshots`: fed every event when given (a follower's read has none to feed:
  // the snapshots come at the end of the trace).
  Collector(FinalizeTap* tap, FinalizeAddon* addon, symbolize::SnapshotRoots* snapshots = nullptr)
      : tap_(tap), addon_(addon), snapshots_(snapshots) {}

  // `fresh`, `key`: Reader::fresh_frames() and backtrace_key() for an Alloc.
  // Half the events are Frees, which need only the count and the tap: they
  // leave after it without the other kinds' tests, and the Alloc's frames are
  // looked at out of line (inline, their loop made every event save and
  // restore six registers).
  void add(const format::Event& e, uint32_t fresh, const reader::BacktraceKey& key = {}) {
    if (const auto* free = std::get_if<format::Free>(&e)) return add_free(e, *free);
    if (const auto* alloc = std::get_if<format::Alloc>(&e)) return add_alloc(e, *alloc, fresh, key);
    if (std::holds_alternative<format::SymbolDef>(e)) return;  // replaced or kept as a whole
    if (tap_) tap_->keyed_event(e, key);
    counted(e);
    add_other(e);
  }

  // The event `r` just delivered: only an Alloc asks the reader for its fresh
  // frames and backtrace key (two virtual calls per event before; one call
  // for both, then none where the reader keeps them in one place).
  void add_read(const format::Event& e, const reader::Reader& r) {
    if (const auto* alloc = std::get_if<format::Alloc>(&e)) {
      uint32_t fresh;
      if (const reader::BacktraceKey* key = r.alloc_key_in_place(fresh)) [[likely]]
        return add_alloc(e, *alloc, fresh, *key);
      return add_alloc_asking(e, *alloc, r);
    }
    add(e, 0);
  }

  // What the read has collected so far (the addresses seen while no module
  // covered them come with finish()).
  const Collected& so_far() const { return c_; }

  Collected finish(std::optional<Error> damage) && {
    for (uint64_t address : unmapped_) {
      if (auto m = c_.modules.find_any_time(address)) c_.addresses.push_back({address, *m});
    }
    c_.damage = std::move(damage);
    return std::move(c_);
  }

 private:
  // add() of the two kinds nearly every event is, each handed to the tap as
  // itself (FinalizeTap::alloc_event, free_event).
  void add_free(const format::Event& e, const format::Free& free) {
    if (tap_) tap_->free_event(e, free);
    counted(e);
  }
  void add_alloc(const format::Event& e, const format::Alloc& alloc, uint32_t fresh,
                 const reader::BacktraceKey& key) {
    if (tap_) tap_->alloc_event(e, alloc, key);
    counted(e);
    if (addon_) addon_->alloc(alloc, key);
    if (fresh != 0 && !alloc.backtrace.empty()) note_frames(alloc.backtrace, fresh);
  }

  // add_alloc() with the key asked of a reader that keeps none in place.
  [[gnu::noinline]] void add_alloc_asking(const format::Event& e, const format::Alloc& alloc,
                                          const reader::Reader& r) {
    uint32_t fresh;
    const reader::BacktraceKey key = r.alloc_key(fresh);
    add_alloc(e, alloc, fresh, key);
  }

  // Every kept event, once the tap has seen it: counted, and fed to the snapshots.
  void counted(const format::Event& e) {
    ++c_.events;
    if (snapshots_) snapshots_->add(e);
  }

  // The Alloc's first `fresh` frames (the others were seen with an earlier Alloc).
  [[gnu::noinline]] void note_frames(std::span<const uint64_t> backtrace, uint32_t fresh) {
    for (uint64_t address : backtrace.first(std::min<size_t>(fresh, backtrace.size()))) {
      if (!seen_.insert(address).second) continue;
      if (auto m = c_.modules.find(address)) {
        c_.addresses.push_back({address, *m});
      } else {
        unmapped_.push_back(address);
      }
    }
  }

  // The events other than Alloc, Free and SymbolDef.
  [[gnu::noinline]] void add_other(const format::Event& e) {
    if (snapshots_) {
      // The snapshots were fed the thread events; nothing to keep here.
    } else if (const auto* start = std::get_if<format::ThreadStart>(&e)) {
      c_.thread_starts.push_back(*start);
    } else if (const auto* name = std::get_if<format::ThreadName>(&e)) {
      c_.thread_names.emplace_back(name->thread, name->name);
    }
    if (const auto* load = std::get_if<format::ModuleLoad>(&e)) {
      c_.modules.load(*load);
    } else if (const auto* unload = std::get_if<format::ModuleUnload>(&e)) {
      c_.modules.unload(unload->start);
    }
  }

  FinalizeTap* tap_;
  FinalizeAddon* addon_;
  symbolize::SnapshotRoots* snapshots_;
  Collected c_;
  std::unordered_set<uint64_t> seen_;
  std::vector<uint64_t> unmapped_;  // seen while no module covered them
};

}  // namespace memloupe::finalize
