// Version 5's lanes (docs/FORMAT.md §5.8): which lane of a column chunk each
// thread's events go to. The writer's choice, made the same way by the encoder
// and by the finaliser's regrouping of row chunks (reader/streams.h, LaneTaps),
// which must give the same bytes (RoundTrip.DirectColumnsEqualCompactedRows);
// the reader only follows the order stream and each lane's ThreadSwitches.
#pragma once

#include <cstdint>

#include "format/events.h"
#include "format/wire.h"

namespace memloupe::format {

// The lanes a column chunk of a trace in `mode` may use. Sampled traces keep
// one: their events are few (a few thousand a second), and a lane's buffers
// are memory the recorder would touch for nothing (§9, "Version 5").
constexpr unsigned lane_bound(Mode mode) { return mode == Mode::All ? kMaxLanes : 1; }

// The order stream's entry for a run of `count` (>= 1) consecutive events in `lane`.
constexpr uint64_t order_entry(uint64_t count, unsigned lane) { return (count - 1) << kLaneBits | lane; }

// The ThreadSwitch header byte for thread `t`; an escaped one (t >= 31) is
// followed by varint(t) in Stream::Misc.
constexpr uint8_t switch_head(uint32_t t) {
  return static_cast<uint8_t>(static_cast<unsigned>(Code::ThreadSwitch) << kCodeShift |
                              (t < kThreadEscape ? t : kThreadEscape));
}

// The open chunk's lanes. Nothing carries over from one chunk to the next
// (reset() at each chunk's start): a thread opens a lane at its first event in
// the chunk, in order of appearance, and every lane starts at thread 0, as the
// reader assumes, so its first event of another thread writes a ThreadSwitch.
// All zero is the reset state (the encoder's State is zero-initialised).
struct LaneMap {
  uint32_t opener[kMaxLanes] = {};  // the thread that opened each lane
  uint32_t thread[kMaxLanes] = {};  // each lane's current thread (its ThreadSwitches)
  unsigned used = 0;                // lanes opened so far

  void reset() noexcept { *this = LaneMap{}; }
  // Threads beyond `bound` share the last lane.
  unsigned lane_of(uint32_t t, unsigned bound) noexcept {
    for (unsigned i = 0; i < used; ++i)
      if (opener[i] == t) return i;
    if (used < bound) {
      opener[used] = t;
      return used++;
    }
    return bound - 1;
  }
  // The chunk's lane count: lane 0 exists even when only Ext events (which
  // stay in the current lane) were written.
  unsigned lanes() const noexcept { return used ? used : 1; }
};

}  // namespace memloupe::format
