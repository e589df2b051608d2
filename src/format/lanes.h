// Version 5's lanes (docs/FORMAT.md §5.8): which lane of a column chunk each
// thread's events go to. The writer's choice, made the same way by the encoder
// and by the finaliser's regrouping of row chunks (reader/streams.h, ColumnTaps),
// which must give the same bytes (RoundTrip.DirectColumnsEqualCompactedRows);
// the reader only follows the order stream and each lane's ThreadSwitches.
#pragma once

#include <cstddef>
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

// A column chunk's sub-streams after its order stream, in payload order (the
// lengths' and the bytes', §5.8): each stream in turn, a laned one lane by
// lane, for a chunk of `lanes` lanes (1 before version 5). f(stream, lane).
template <class F>
void each_sub_stream(unsigned lanes, F f) {
  for (unsigned i = 0; i < static_cast<unsigned>(Stream::Count); ++i) {
    const auto s = static_cast<Stream>(i);
    for (unsigned l = 0, n = laned(s) ? lanes : 1; l < n; ++l) f(s, l);
  }
}
// The most a chunk has: the order stream and every stream's every lane.
inline constexpr size_t kMaxSubStreams = 1 + static_cast<size_t>(Stream::Count) * kMaxLanes;

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

// The lane rule (§5.8) as a walk over one chunk's events, the one both writers
// of the column form follow: the encoder as it writes events, the finaliser's
// transposer (reader/streams.h, ColumnTaps) as it regroups row chunks. Each
// counts an event into `run` at its own moment, every event (Ext ones too,
// which stay in the current lane): the encoder when it begins one, before it
// knows the thread, the transposer after placing it. place()'s `Counted` says
// which: how many of the run's events (0 or 1) are the event being placed, and
// so stay out of the run it ends. All zero is the reset state, as LaneMap's.
struct LaneWalk {
  LaneMap map;
  unsigned lane = 0;  // the current lane
  uint64_t run = 0;   // events counted in the current lane's run

  void reset() noexcept { *this = LaneWalk{}; }
  // Places an event of thread `t` (an Alloc, Free or realloc) in a chunk of at
  // most `bound` lanes. When that is another lane: puts the current run's
  // order entry (put(entry), if the run has events before this one), calls
  // enter(l) while `lane` is still the one left, and moves to lane l. Returns
  // whether the lane's thread changes to `t`: a ThreadSwitch to write there.
  // (`t` by reference and the hint below keep the encoder's switch_thread the
  // code it was before the rule was shared, 122 instructions a call: with `t`
  // by value it took a saved register, and the order entry's put went out of
  // the straight path, 1-2 instructions more a call.)
  template <uint64_t Counted, class Put, class Enter>
  [[gnu::always_inline]] bool place(const uint32_t& t, unsigned bound, Put put, Enter enter) noexcept {
    static_assert(Counted <= 1);
    const unsigned l = map.lane_of(t, bound);
    if (l != lane) {
      if (run > Counted) [[likely]]  // (the current lane is empty only before the chunk's first event)
        put(order_entry(run - Counted, lane));
      run = Counted;
      enter(l);
      lane = l;
    }
    if (map.thread[l] == t) return false;
    map.thread[l] = t;
    return true;
  }
  // The chunk's end: the last run's order entry, put(entry), if it has events.
  template <class Put>
  void end(Put put) const noexcept {
    if (run != 0) put(order_entry(run, lane));
  }
};

}  // namespace memloupe::format
