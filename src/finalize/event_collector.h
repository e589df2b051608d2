// The finaliser's one read of the events: what symbolisation needs from them,
// with the tap's and the addon's work riding on it (finalize.h). Fed by
// whichever read delivers the events: the compaction's, a Reader's, or a
// follower's while the program runs (follow.h).
#pragma once

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <vector>

#include "finalize/finalize.h"
#include "format/events.h"
#include "format/expected.h"
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
};

class Collector {
 public:
  // `snapshots`: fed every event when given (a follower's read has none to feed:
  // the snapshots come at the end of the trace).
  Collector(FinalizeTap* tap, FinalizeAddon* addon, symbolize::SnapshotRoots* snapshots = nullptr)
      : tap_(tap), addon_(addon), snapshots_(snapshots) {}

  // `fresh`: Reader::fresh_frames() for an Alloc.
  void add(const format::Event& e, uint32_t fresh) {
    if (std::holds_alternative<format::SymbolDef>(e)) return;  // replaced or kept as a whole
    ++c_.events;
    if (tap_) tap_->event(e);
    if (snapshots_) snapshots_->add(e);
    if (const auto* alloc = std::get_if<format::Alloc>(&e)) {
      if (addon_) addon_->alloc(*alloc);
      // The other frames were seen with an earlier Alloc.
      for (uint64_t address : alloc->backtrace.first(std::min<size_t>(fresh, alloc->backtrace.size()))) {
        if (!seen_.insert(address).second) continue;
        if (auto m = c_.modules.find(address)) {
          c_.addresses.push_back({address, *m});
        } else {
          unmapped_.push_back(address);
        }
      }
    } else if (const auto* load = std::get_if<format::ModuleLoad>(&e)) {
      c_.modules.load(*load);
    } else if (const auto* unload = std::get_if<format::ModuleUnload>(&e)) {
      c_.modules.unload(unload->start);
    }
  }

  Collected finish(std::optional<Error> damage) && {
    for (uint64_t address : unmapped_) {
      if (auto m = c_.modules.find_any_time(address)) c_.addresses.push_back({address, *m});
    }
    c_.damage = std::move(damage);
    return std::move(c_);
  }

 private:
  FinalizeTap* tap_;
  FinalizeAddon* addon_;
  symbolize::SnapshotRoots* snapshots_;
  Collected c_;
  std::unordered_set<uint64_t> seen_;
  std::vector<uint64_t> unmapped_;  // seen while no module covered them
};

}  // namespace memloupe::finalize
