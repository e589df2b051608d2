// The encoder's state: everything lives in fixed arrays inside the Encoder, so
// encoding never allocates. Only src/format/encoder*.cc use it; encoder.h holds
// it as a member so that a new Encoder is constant-initialised.
//
// A new State is all zero bytes (sink null, Mode::Sampled) and is not written
// again by Encoder's constexpr constructor: every member's initial value must be
// zero. (Where the natural initial value is not, the member stores it offset:
// see AllocHistory::free_for_ and BacktraceHasher.)
#pragma once

#include <cstring>
#include <span>

#include "format/chunk.h"
#include "format/events.h"
#include "format/frame_cache.h"
#include "format/history.h"
#include "format/lanes.h"
#include "format/shared_frames.h"
#include "format/varint.h"
#include "format/wire.h"

namespace memloupe::format {

struct AllocRecord;  // encoder.h

namespace encoder_detail {

inline constexpr size_t kChunkPayload = 64 * 1024;  // row form (ChunkType::Events)
inline constexpr size_t kEventsPrefix = 16;  // u64 start time (µs), u64 alloc-id base
// Column form (ChunkType::EventsColumns, docs/FORMAT.md §5.8): each stream, and
// each lane of a laned stream, has a buffer of its own, as has the order
// stream; the chunk is cut when one of them runs short or when all of them
// together near kColumnsBudget (the sealed chunk's room).
inline constexpr size_t kStreamCount = static_cast<size_t>(Stream::Count);
inline constexpr size_t kStreamPayload = 512 * 1024;
inline constexpr size_t kColumnsBudget = kStreamCount * kStreamPayload;
inline constexpr size_t kColumnsPrefix = kEventsPrefix + 2 + kMaxSubStreams * kMaxVarint;
inline constexpr size_t kColumnsChunk = kChunkHeaderSize + kColumnsPrefix + kColumnsBudget;
static_assert(kColumnsChunk - kChunkHeaderSize <= kMaxChunkRaw);
// The laned streams' places in Buffers::lanes (wire.h, laned()).
inline constexpr unsigned kLanedStreams = 4;
inline constexpr unsigned laned_index(Stream s) {
  return s == Stream::Head ? 0 : s == Stream::Word ? 1 : s == Stream::Size ? 2 : 3;
}
static_assert(laned(Stream::Head) && laned(Stream::Word) && laned(Stream::Size) && laned(Stream::Ref));
// Upper bound of one event with everything it may drag along (thread switch,
// realloc prefix); the encoder never starts an event with less room left (in
// every stream, in the column form).
inline constexpr size_t kMaxEvent = 6 + 21 + 11 + 1 + 40 + 2 * kMaxVarint + kMaxFrames * 13 + 64;
static_assert(kMaxEvent < 8 * 1024);
static_assert(kMaxString + kMaxBuildId + 64 < 8 * 1024);
inline constexpr size_t kReserve = 8 * 1024;

// The open chunk's bytes. Apart from State, so that Encoder::reset() (a fork
// child's new trace) does not write ~20 MB of them: they are written before
// they are read, and pages of them never written (lanes no thread used, in a
// static Encoder) cost no memory.
struct Buffers {
  alignas(8) uint8_t rows[kChunkHeaderSize + kChunkPayload] = {};  // row form
  alignas(8) uint8_t streams[kStreamCount][kStreamPayload] = {};   // every stream's lane 0
  alignas(8) uint8_t lanes[kLanedStreams][kMaxLanes - 1][kStreamPayload] = {};  // the laned streams' lanes 1..
  alignas(8) uint8_t order[kStreamPayload] = {};
  alignas(8) uint8_t sealed[kColumnsChunk] = {};  // a sealed column chunk

  uint8_t* stream(Stream s, unsigned lane) noexcept {
    return lane == 0 ? streams[static_cast<unsigned>(s)] : lanes[laned_index(s)][lane - 1];
  }
};

// Where an event's fields go: each to the cursor of its stream (wire.h). In the
// row form every stream is the one byte sequence, so the fields land
// interleaved in the order they are written, which is the row form's order.
struct Out {
  uint8_t* at[kStreamCount];
  bool rows;
  uint8_t*& operator[](Stream s) noexcept { return at[rows ? 0 : static_cast<unsigned>(s)]; }
};

// A backtrace-cache slot. The reader keeps the same slots (with the frames
// instead of the depth) and applies the same placement: a backtrace may live in
// way1 or way2 of its hash; a new one replaces an unused slot, else the one
// used least recently (dates are allocation ids).
struct BtEntry {
  uint64_t hash;
  uint64_t size;
  uint32_t date;  // (alloc id + 1) mod 2^32; both sides truncate alike
  uint32_t align;
  uint16_t depth;
  Func func;
  bool used;
};

// The last backtrace hashed for a thread bucket (thread % kThreadBuckets), kept
// so that the next one's hash resumes from the outer frames they share
// (docs/FORMAT.md §5.5): a loop allocates from one site again and again, and a
// deep program's sites share most of their stack. The frames are stored as
// they come, innermost first, right-aligned (the outermost at
// [kMaxFrames - 1]), where shared_outer_frames() compares them.
// Backtraces of up to kShortFrames frames skip it: they are hashed whole (a
// few steps) and remembered in a direct-mapped memo (ShortMemo), which finds a
// thread's alternating sites where resuming would hash their differing inner
// frames again (bench_alloc_mt, 5-7 frames: ~40 instructions more per
// allocation through the prefix).
inline constexpr size_t kShortFrames = 8;
struct HashPrefix {
  uint32_t n = 0;
  uint32_t seq = 0;     // the backtrace's SharedPrefix (chain 0: none)
  uintptr_t chain = 0;
  // frames[kMaxFrames - copied ..] are the previous backtrace's outer frames.
  // A backtrace whose shared frames the caller's hint gives is not copied (0):
  // the next one of its chain takes the hint too, and only a backtrace without
  // one compares (a chain broken, two threads in one bucket), then from scratch.
  uint32_t copied = 0;
  uint64_t frames[kMaxFrames] = {};
  BacktraceHasher hasher;
};

// A short backtrace hashed recently, placed by its depth and its two innermost
// frames. 64 entries (16 before: with the key's fix, 10% of bench_alloc_mt's
// lookups still missed in 16, 2% in 64).
struct ShortMemo {
  uint64_t hash = 0;
  uint32_t n = 0;  // 0 until the first backtrace: only non-empty ones are looked up
  uint64_t frames[kShortFrames] = {};
};
inline constexpr unsigned kShortMemoBits = 6;

struct State {
  ChunkSink* sink = nullptr;
  Mode mode = Mode::Sampled;
  bool addresses = false;  // Mode::All with per-event addresses (Encoder::start)
  FrameCacheEncoder frames;
  AllocHistory history;
  BtEntry bt_cache[kBtCacheSize] = {};
  HashPrefix hash_prefix[kThreadBuckets] = {};
  ShortMemo short_memo[1u << kShortMemoBits] = {};
  // The last explicitly written backtrace, outermost first, and its frames' slots.
  uint64_t prev_outer[kMaxFrames] = {};
  uint16_t prev_slots[kMaxFrames] = {};
  unsigned prev_n = 0;
  Func last_alloc_func = Func::Malloc;
  uint32_t thread = 0;
  uint64_t next_id = 0;
  uint64_t last_us = 0;  // in ticks: µs >> unit_shift
  unsigned unit_shift = 0;  // log2 of the time unit in µs (Encoder::start)
  uint64_t bytes_written = 0;
  bool columns = false;  // write ChunkType::EventsColumns (Encoder::start)
  bool open = false;     // a chunk has been started (its prefix taken)
  uint32_t sure_room = 0;  // events the open chunk surely has room for (begin(), measure_room()); 0 while none is open
  uint64_t chunk_us = 0, chunk_id = 0;  // the open chunk's prefix
  // The write cursors of the open chunk, kept from event to event (a copy per
  // event cost ~50 instructions); Encoder::start sets out.rows. In the column
  // form the laned streams' cursors are those of the current lane; the other
  // lanes' are kept in lane_at.
  Out out = {};
  Buffers* b = nullptr;  // Encoder::start
  // Lanes (column form, docs/FORMAT.md §5.8).
  unsigned lane_bound = 0;  // lanes a chunk may use (format::lane_bound; Encoder::start)
  LaneWalk walk;  // its run counts the event begun (begin())
  uint8_t* order_at = nullptr;
  uint8_t* lane_at[kMaxLanes][kStreamCount] = {};  // (laned streams only; the current lane's are in out)
  // The thread of the previous switch_to, whose lane the cursors are in; in the
  // column form no thread's (kNoThread) at a chunk's start, where the lanes start anew.
  static constexpr uint64_t kNoThread = ~uint64_t{0};
  uint64_t switched = 0;

  uint8_t* payload() noexcept { return b->rows + kChunkHeaderSize; }
  void put_order(uint64_t entry) noexcept { order_at = put_varint(order_at, entry); }
  uint8_t* cursor(Stream s, unsigned l) const noexcept {
    return !laned(s) || l == walk.lane ? out.at[static_cast<unsigned>(s)] : lane_at[l][static_cast<unsigned>(s)];
  }

  // Makes room for one event and returns where its fields go. Inline, with the
  // chunk's opening out of line: grown by the lanes' set-up, begin() was no
  // longer inlined, and its call cost ~35 instructions an event (callgrind of (b)).
  // The sure room is the one test of most events: it is 0 whenever no chunk
  // is open (seal() and open_chunk() zero it), so `open` is tested on the
  // slow path only (~3 instructions an event fewer).
  [[gnu::always_inline]] Out& begin() noexcept {
    if (sure_room != 0) [[likely]]
      --sure_room;
    else
      begin_slowly();
    ++walk.run;
    return out;
  }
  [[gnu::noinline]] void begin_slowly() noexcept {
    if (open && !measure_room()) seal();
    if (!open) open_chunk();
  }
  [[gnu::noinline]] void open_chunk() noexcept {
    open = true;
    sure_room = 0;
    chunk_us = last_us;
    chunk_id = next_id;
    if (columns) {
      for (size_t i = 0; i < kStreamCount; ++i) out.at[i] = b->streams[i];
      for (unsigned l = 1; l < lane_bound; ++l)
        for (size_t i = 0; i < kStreamCount; ++i)
          if (laned(static_cast<Stream>(i))) lane_at[l][i] = b->stream(static_cast<Stream>(i), l);
      walk.reset();
      order_at = b->order;
      switched = kNoThread;
    } else {
      uint8_t* p = put_u64(payload(), last_us);
      out.at[0] = put_u64(p, next_id);
    }
  }

  // Calls f(stream, lane, bytes written) for every buffer of the open chunk.
  template <class F>
  void each_buffer(F f) const noexcept {
    each_sub_stream(walk.map.lanes(),
                    [&](Stream s, unsigned l) { f(s, l, static_cast<size_t>(cursor(s, l) - b->stream(s, l))); });
  }
  size_t open_bytes() const noexcept {
    if (!open) return 0;
    if (!columns) return static_cast<size_t>(out.at[0] - b->rows) - kChunkHeaderSize;
    size_t n = static_cast<size_t>(order_at - b->order);
    each_buffer([&](Stream, unsigned, size_t used) { n += used; });
    return n;
  }
  // Whether the open chunk can take one more event (kReserve in every stream).
  // An allocation, realloc or free writes at most kMaxEvent bytes in all, so
  // when the tightest stream has `least` bytes left, the
  // (least - kReserve) / kMaxEvent events after this one find room too without
  // looking: the chunks are cut where they were, and the eight streams' ends
  // are compared once per up to 148 events instead of on every one (~20
  // instructions per event on the flush thread; once per 63, counting
  // kReserve an event, measure_room was still ~8 instructions a record on
  // (a)). An Ext event may write up to kReserve: ext() measures before it
  // and makes the event after it measure too. (begin() counts the sure room
  // down.)
  bool measure_room() noexcept {
    size_t least;
    if (!columns) {
      least = static_cast<size_t>(b->rows + sizeof(b->rows) - out.at[0]);
    } else {
      // Every buffer, and all of them together (an event writes fewer than
      // kReserve bytes in all, whichever lanes it opens). Plain loops: through
      // each_buffer()'s cursor() this was ~300 instructions a call, 0.4% of
      // (b)'s recording.
      size_t total = static_cast<size_t>(order_at - b->order), most = total;
      for (size_t i = 0; i < kStreamCount; ++i) {
        const auto s = static_cast<Stream>(i);
        const auto used = static_cast<size_t>(out.at[i] - b->stream(s, laned(s) ? walk.lane : 0));
        total += used;
        most = used > most ? used : most;
        if (!laned(s)) continue;
        for (unsigned l = 0; l < walk.map.used; ++l) {
          if (l == walk.lane) continue;
          const auto other = static_cast<size_t>(lane_at[l][i] - b->stream(s, l));
          total += other;
          most = other > most ? other : most;
        }
      }
      least = kStreamPayload - most;
      least = kColumnsBudget - total < least ? kColumnsBudget - total : least;
    }
    if (least < kReserve) return false;
    sure_room = static_cast<uint32_t>((least - kReserve) / kMaxEvent);
    return true;
  }

  void seal() noexcept {
    if (!open) return;
    open = false;
    sure_room = 0;
    if (!columns) {
      const size_t len = static_cast<size_t>(out.at[0] - payload());
      if (len <= kEventsPrefix) return;
      write_chunk_header(b->rows, ChunkType::Events, 0, {payload(), len}, static_cast<uint32_t>(len));
      sink->write_chunk({b->rows, kChunkHeaderSize + len});
      bytes_written += kChunkHeaderSize + len;
      return;
    }
    if (walk.run == 0) return;  // no event
    walk.end([this](uint64_t entry) { put_order(entry); });
    // u64 start time | u64 alloc-id base | u8 stream count | u8 lane count |
    // varint lengths | order stream | streams, each laned one lane by lane
    uint8_t* const start = b->sealed + kChunkHeaderSize;
    uint8_t* p = put_u64(start, chunk_us);
    p = put_u64(p, chunk_id);
    *p++ = static_cast<uint8_t>(kStreamCount);
    *p++ = static_cast<uint8_t>(walk.map.lanes());
    p = put_varint(p, static_cast<size_t>(order_at - b->order));
    each_buffer([&](Stream, unsigned, size_t used) { p = put_varint(p, used); });
    std::memcpy(p, b->order, static_cast<size_t>(order_at - b->order));
    p += order_at - b->order;
    each_buffer([&](Stream s, unsigned l, size_t used) {
      std::memcpy(p, b->stream(s, l), used);
      p += used;
    });
    const size_t n = static_cast<size_t>(p - start);
    write_chunk_header(b->sealed, ChunkType::EventsColumns, 0, {start, n}, static_cast<uint32_t>(n));
    sink->write_chunk({b->sealed, kChunkHeaderSize + n});
    bytes_written += kChunkHeaderSize + n;
  }

  void timed(Out& o, Code code, uint64_t time_ns) noexcept {
    uint64_t t = time_ns / kTimeUnitNs >> unit_shift;
    if (t < last_us) t = last_us;
    const uint64_t dt = t - last_us;
    last_us = t;
    const bool more = dt > 0xf;
    *o[Stream::Head]++ = static_cast<uint8_t>(static_cast<unsigned>(code) << kCodeShift |
                                              (more ? kDtMore : 0) | (dt & 0xf));
    if (more) {
      uint8_t*& p = o[Stream::Time];  // named once (State::alloc says why)
      p = put_varint(p, dt >> kDtInlineBits);
    }
  }

  // The thread of the event begun: its lane in the column form (a new run in
  // the order stream when the lane changes), and a ThreadSwitch when the
  // thread is not the one last written (row form) or its lane's (columns).
  [[gnu::always_inline]] void switch_to(Out& o, ThreadId t) noexcept {
    if (t.value != switched) [[unlikely]]
      switch_thread(o, t);
  }
  [[gnu::noinline]] void switch_thread(Out& o, ThreadId t) noexcept {
    switched = t.value;
    thread = t.value;
    if (columns) {
      // The lane rule; a change of lane moves the laned streams' cursors to lane l's.
      const auto enter = [this, &o](unsigned l) {
        for (size_t i = 0; i < kStreamCount; ++i) {
          if (!laned(static_cast<Stream>(i))) continue;
          lane_at[walk.lane][i] = o.at[i];
          o.at[i] = lane_at[l][i];
        }
      };
      if (!walk.place<1>(thread, lane_bound, [this](uint64_t entry) { put_order(entry); }, enter)) return;
    }
    *o[Stream::Head]++ = switch_head(thread);
    if (thread >= kThreadEscape) {
      uint8_t*& p = o[Stream::Misc];
      p = put_varint(p, thread);
    }
  }

  // Opens an Ext event and writes its header; the event's fields go to the
  // returned cursor, Stream::Misc's.
  uint8_t*& ext(ExtType type, uint64_t time_ns) noexcept {
    sure_room = 0;  // measured, for up to kReserve bytes (measure_room())
    Out& o = begin();
    sure_room = 0;  // and measured again after it
    timed(o, Code::Ext, time_ns);
    *o[Stream::Head]++ = static_cast<uint8_t>(type);
    return o[Stream::Misc];
  }

  // backtrace_hash(bt): a short one whole or from ShortMemo; a deeper one
  // resumed from the frames it shares with the thread bucket's previous deep
  // backtrace (the encoder sees the threads' events interleaved). What is shared is compared, or taken from the caller's hint
  // when the bucket's previous backtrace is the one the hint counts from; so a
  // bucket shared by two threads costs hashing, never a wrong hash.
  // Inline up to the memo (in State::alloc, itself inline in its callers:
  // encoder.cc), the deep path out of line: out of line whole, its call and
  // saved registers were ~15 of the ~70 instructions a short backtrace's hash
  // took on (a).
  [[gnu::always_inline]] uint64_t hash_of(std::span<const uint64_t> bt, const SharedPrefix& hint) noexcept {
    return bt.size() <= kShortFrames ? short_hash(bt) : deep_hash(bt, hint);
  }
  [[gnu::noinline]] uint64_t deep_hash(std::span<const uint64_t> bt, const SharedPrefix& hint) noexcept {
    const size_t n = bt.size();
    HashPrefix& p = hash_prefix[thread % kThreadBuckets];
    const size_t most = n < p.n ? n : p.n;
    const uint64_t* const end = bt.data() + n;
    const bool known = hint.chain != 0 && hint.chain == p.chain && hint.seq == p.seq + 1;
    size_t common;
    if (known) {
      common = hint.shared < most ? hint.shared : most;
      p.copied = 0;  // no copy: the next backtrace of the chain takes the hint too
    } else {
      common = shared_outer_frames(end, p.frames + kMaxFrames, most < p.copied ? most : p.copied);
      if (n != common) std::memcpy(p.frames + kMaxFrames - n, bt.data(), (n - common) * sizeof(uint64_t));
      p.copied = static_cast<uint32_t>(n);
    }
    p.chain = hint.chain;
    p.seq = hint.seq;
    p.n = static_cast<uint32_t>(n);
    return p.hasher.resume(common, n, [end](size_t i) { return end[-1 - static_cast<ptrdiff_t>(i)]; });
  }

  [[gnu::always_inline]] uint64_t short_hash(std::span<const uint64_t> bt) noexcept {
    const size_t n = bt.size();
    if (n == 0) return backtrace_hash(bt);  // (an empty span's data() may be null: no memcmp)
    // Placed by the two innermost frames, where a program's sites differ: the
    // outer ones are shared (a thread's entry, main). Placed by bt[n / 2] and
    // bt[2] before, all of bench_alloc_mt's ten 5-frame sites took one entry
    // (both are the same frame there, libstdc++'s thread entry), and 5 of 6
    // lookups missed and hashed and copied their frames again.
    const uint64_t key = (bt[0] ^ bt[n > 1 ? 1 : 0] << 7) * 0x9e3779b97f4a7c15ull + n;
    ShortMemo& m = short_memo[key >> (64 - kShortMemoBits)];
    if (m.n == n && same_short_frames(m.frames, bt.data(), n)) return m.hash;
    m.hash = backtrace_hash(bt);
    m.n = static_cast<uint32_t>(n);
    std::memcpy(m.frames, bt.data(), n * sizeof(uint64_t));
    return m.hash;
  }
  // Whether a[0..n) and b[0..n) hold the same frames (1 <= n <= kShortFrames):
  // the differences folded into one word, unrolled by a jump on n. ~3
  // instructions a frame; memcmp's call, its set-up and its own work were ~40
  // an allocation on (a)'s flush thread (loops that folded or compared frame by
  // frame had not beaten it: docs/RECORDER.md, "The flush thread per record").
  [[gnu::always_inline]] static bool same_short_frames(const uint64_t* a, const uint64_t* b, size_t n) noexcept {
    static_assert(kShortFrames == 8);
    uint64_t d = 0;
    switch (n) {
      case 8: d |= a[7] ^ b[7]; [[fallthrough]];
      case 7: d |= a[6] ^ b[6]; [[fallthrough]];
      case 6: d |= a[5] ^ b[5]; [[fallthrough]];
      case 5: d |= a[4] ^ b[4]; [[fallthrough]];
      case 4: d |= a[3] ^ b[3]; [[fallthrough]];
      case 3: d |= a[2] ^ b[2]; [[fallthrough]];
      case 2: d |= a[1] ^ b[1]; [[fallthrough]];
      case 1: d |= a[0] ^ b[0]; break;
      default: __builtin_unreachable();  // (no test of the jump's range)
    }
    return d == 0;
  }

  void address(Out& o, uint8_t* flags_at, uint64_t size, uint64_t addr, unsigned& newest) noexcept;
  void backtrace(Out& o, std::span<const uint64_t> bt) noexcept;
  AllocId alloc(Out& o, const AllocRecord& r) noexcept;
};

}  // namespace encoder_detail

using encoder_detail::BtEntry;
using encoder_detail::HashPrefix;
using encoder_detail::kChunkPayload;
using encoder_detail::kEventsPrefix;
using encoder_detail::kReserve;
using encoder_detail::kStreamPayload;
using encoder_detail::Out;

}  // namespace memloupe::format
