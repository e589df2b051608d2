// Decodes the events of memloupe events chunks: the mirror image of
// format/encoder.cc. Its state (frame cache, backtrace cache, previous
// backtrace, alloc history, current thread, time) carries over from chunk to
// chunk, so chunks must be fed in file order; after an error the decoder is
// unusable (the caller stops there).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "format/events.h"
#include "format/expected.h"
#include "format/history.h"
#include "format/wire.h"
#include "reader/cursor.h"
#include "reader/reader.h"
#include "reader/streams.h"
#include "reader/zeroed.h"

namespace memloupe::reader {

class EventDecoder {
 public:
  // The trace's mode and whether its Alloc events carry addresses (header), and
  // its format version (prologue).
  explicit EventDecoder(const format::TraceInfo& info);
  // alloc_, free_ and pending_ point into the decoder itself.
  EventDecoder(const EventDecoder&) = delete;
  EventDecoder& operator=(const EventDecoder&) = delete;

  // Reads an events chunk's prefix (start time, alloc-id base) and checks it
  // against the decoder's state.
  [[nodiscard]] std::optional<Error> begin_chunk(Cursor& c);
  // Decodes the chunk's next event from `in`. Returns nullptr at the end of the
  // chunk (leaving `err` empty; every stream must be used up) or on damage (with
  // `err` set).
  // (Compiled for Streams and TappedStreams: event_decoder.cc.)
  template <class In>
  const format::Event* next(In& in, std::optional<Error>& err);

  uint64_t allocs() const { return next_id_; }
  uint64_t time_ticks() const { return last_tick_; }  // in the header's time unit
  // True between a realloc's Free and its Alloc (already read, not yet delivered).
  bool pending() const { return has_pending_; }
  // For the Alloc just delivered: how many of its innermost frames were read for
  // it. The others are the outer frames shared with the previous backtrace read
  // (prefix sharing), or all of them when the backtrace came from the backtrace
  // cache; so each of those appeared in an Alloc delivered before (Reader::fresh_frames).
  uint32_t fresh_frames() const { return fresh_frames_; }
  // For the Alloc just delivered: its backtrace's place in the backtrace cache
  // (Reader::backtrace_key).
  BacktraceKey backtrace_key() const { return key_; }
  // Where the two above are kept (Reader::alloc_key_view).
  const uint32_t* fresh_frames_at() const { return &fresh_frames_; }
  const BacktraceKey* backtrace_key_at() const { return &key_; }

 private:
  // One cache line each: a cached Alloc reads its slot's entry, a line that
  // is not in the cache on deep-stack traces (4096 entries), so one miss and
  // not two (at the vector's default 16-byte alignment three in four entries
  // straddled two lines).
  struct alignas(64) BtEntry {
    uint64_t size = 0;
    uint32_t date = 0;
    uint32_t align = 0;
    format::Func func = format::Func::Malloc;
    bool used = false;
    uint32_t memo = 0;        // BacktraceKey::memo: zeroed when the slot is filled
    uint32_t addon_memo = 0;  // BacktraceKey::addon_memo: the same
    uint64_t serial = 0;  // which filling of the slot: 1 + the fillings before it, in any slot
    std::vector<uint64_t> frames;  // innermost first
  };
  static_assert(sizeof(BtEntry) == 64);

  // The event's time. Inline for the common case (the delta fits the header
  // byte): out of line, with its error paths, it cost ~30 instructions an event,
  // most of them the call's prologue and epilogue.
  template <class In>
  std::optional<Error> timed(In& in, uint8_t arg, uint64_t& time_ns) {
    const uint64_t dt = arg & 0xf;
    if (!(arg & format::kDtMore) && dt <= max_ticks_ - last_tick_) [[likely]] {
      last_tick_ += dt;
      time_ns = last_tick_ * unit_ns_;
      return std::nullopt;
    }
    return timed_long(in, arg, time_ns);
  }
  template <class In>
  std::optional<Error> timed_long(In& in, uint8_t arg, uint64_t& time_ns);
  // An event's damage, handed to the caller out of line: `err = kind(...)` per
  // event tested and reset the caller's err through memory (~5 instructions
  // of every event, callgrind of (a)).
  [[gnu::noinline, gnu::cold]] static const format::Event* failed(std::optional<Error>& err,
                                                                  std::optional<Error>& e) {
    err = std::move(e);
    return nullptr;
  }
  // Reads a block reference (wire.h) and resolves it to an allocation id.
  // block() inlined into free() and realloc(), free() into next(): as calls of
  // their own (each std::optional<Error> returned through memory, six
  // registers saved) they were ~45 instructions of every Free.
  template <class In>
  [[gnu::always_inline]] inline std::optional<Error> block(In& in, unsigned low_bits, uint64_t& raw, uint64_t& id);
  template <class In>
  [[gnu::always_inline]] inline std::optional<Error> free(In& in, uint8_t arg);
  template <class In>
  std::optional<Error> realloc(In& in, uint8_t arg);
  // alloc() inlined into next() (and realloc()) for the same reason, and
  // address() into alloc(): as calls they were ~25 and ~5 instructions of
  // every Alloc (callgrind of the suite's (a)). backtrace(), for the Allocs
  // whose backtrace is not cached, stays a call (backtrace_decoder.cc).
  template <class In>
  [[gnu::always_inline]] inline std::optional<Error> alloc(In& in, format::Code code, uint8_t arg, format::Alloc& a);
  template <class In>
  std::optional<Error> backtrace(In& in);
  template <class In>
  [[gnu::always_inline]] inline std::optional<Error> address(In& in, unsigned form, uint64_t size, uint64_t& addr);
  template <class In>
  std::optional<Error> ext(In& in, uint8_t arg);
  template <class In>
  bool next_run(In& in, std::optional<Error>& err);

  bool addresses_;  // Mode::All with per-event addresses
  uint32_t version_;  // the trace's format version: which backtrace hash places the cache
  // Version 2: the hash states of prev_outer_'s prefixes.
  format::BacktraceHasher hasher_;
  // Frame cache: the reader never hashes, it only follows slot numbers.
  // (Zeroed: faulted in as used, zeroed.h.)
  Zeroed<uint64_t[]> loc_;
  Zeroed<uint16_t[]> next_;
  std::vector<BtEntry> bt_cache_;
  std::array<uint64_t, format::kMaxFrames> prev_outer_{};
  std::array<uint16_t, format::kMaxFrames> prev_slots_{};
  unsigned prev_n_ = 0;
  std::vector<uint64_t> bt_;  // the backtrace being read, innermost first
  uint32_t fresh_frames_ = 0;
  uint64_t fillings_ = 0;  // of backtrace-cache slots, so far
  BacktraceKey key_;
  Zeroed<format::AllocHistory> history_;
  uint64_t unit_ns_;  // ns per tick (TraceInfo::time_unit_ns)
  // The time must stay representable in ns: at most this many ticks (a division
  // per event, once 8% of the decoder's time, when computed in timed()).
  uint64_t max_ticks_;
  format::Func last_alloc_func_ = format::Func::Malloc;
  uint32_t thread_ = 0;
  // Version 5's lanes (docs/FORMAT.md §5.8): the events left in the current
  // run (of a chunk without lanes: all, ~0), its lane, and each lane's thread.
  uint64_t run_left_ = 0;
  unsigned lane_ = 0;
  std::array<uint32_t, format::kMaxLanes> lane_thread_{};
  uint32_t rate_ = 0;  // the last RateChange's mean (0: none yet, the header's)
  uint64_t next_id_ = 0;
  uint64_t last_tick_ = 0;

  // The events delivered: an Alloc, a Free and a realloc's Alloc each in a
  // variant of its own that never changes its kind, so delivering one is
  // filling its fields (each kind's decoder sets them all, realloc_of aside),
  // without the variant's emplace (a Free's fields zeroed first, an Alloc
  // after a Free copied from a blank one: 12 SSE moves) and without copying a
  // realloc's Alloc into place; event_ holds the other kinds.
  format::Event event_;
  format::Event alloc_event_{std::in_place_type<format::Alloc>};
  format::Event free_event_{std::in_place_type<format::Free>};
  format::Event pending_event_{std::in_place_type<format::Alloc>};  // the Alloc half of a realloc, after its Free
  format::Alloc* const alloc_ = std::get_if<format::Alloc>(&alloc_event_);
  format::Free* const free_ = std::get_if<format::Free>(&free_event_);
  format::Alloc* const pending_ = std::get_if<format::Alloc>(&pending_event_);
  bool has_pending_ = false;
  std::vector<std::string_view> strings_;
  std::array<uint8_t, format::kMaxBuildId> build_id_{};
};

}  // namespace memloupe::reader
