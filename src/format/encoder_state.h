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
#include "format/shared_frames.h"
#include "format/varint.h"
#include "format/wire.h"

namespace memloupe::format {

struct AllocRecord;  // encoder.h

namespace encoder_detail {

inline constexpr size_t kChunkPayload = 64 * 1024;  // row form (ChunkType::Events)
inline constexpr size_t kEventsPrefix = 16;  // u64 start time (µs), u64 alloc-id base
// Column form (ChunkType::EventsColumns, docs/FORMAT.md §5.8): each stream has a
// buffer of its own; the chunk is cut when one of them runs short.
inline constexpr size_t kStreamCount = static_cast<size_t>(Stream::Count);
inline constexpr size_t kStreamPayload = 512 * 1024;
inline constexpr size_t kColumnsPrefix = kEventsPrefix + 1 + kStreamCount * kMaxVarint;
inline constexpr size_t kColumnsChunk = kChunkHeaderSize + kColumnsPrefix + kStreamCount * kStreamPayload;
static_assert(kColumnsChunk - kChunkHeaderSize <= kMaxChunkRaw);
// Upper bound of one event with everything it may drag along (thread switch,
// realloc prefix); the encoder never starts an event with less room left (in
// every stream, in the column form).
inline constexpr size_t kMaxEvent = 6 + 21 + 11 + 1 + 40 + 2 * kMaxVarint + kMaxFrames * 13 + 64;
static_assert(kMaxEvent < 8 * 1024);
static_assert(kMaxString + kMaxBuildId + 64 < 8 * 1024);
inline constexpr size_t kReserve = 8 * 1024;

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
  uint32_t sure_room = 0;  // events the open chunk surely has room for (room())
  uint64_t chunk_us = 0, chunk_id = 0;  // the open chunk's prefix
  // The write cursors of the open chunk, kept from event to event (a copy per
  // event cost ~50 instructions); Encoder::start sets out.rows.
  Out out = {};
  alignas(8) uint8_t buf[kChunkHeaderSize + kChunkPayload] = {};  // row form
  alignas(8) uint8_t streams[kStreamCount][kStreamPayload] = {};  // column form
  alignas(8) uint8_t columns_buf[kColumnsChunk] = {};  // a sealed column chunk

  uint8_t* payload() noexcept { return buf + kChunkHeaderSize; }

  // Makes room for one event and returns where its fields go.
  Out& begin() noexcept {
    if (open && !room()) seal();
    if (!open) {
      open = true;
      sure_room = 0;
      chunk_us = last_us;
      chunk_id = next_id;
      if (columns) {
        for (size_t i = 0; i < kStreamCount; ++i) out.at[i] = streams[i];
      } else {
        uint8_t* p = put_u64(payload(), last_us);
        out.at[0] = put_u64(p, next_id);
      }
    }
    return out;
  }
  size_t open_bytes() const noexcept {
    if (!open) return 0;
    if (!columns) return static_cast<size_t>(out.at[0] - buf) - kChunkHeaderSize;
    size_t n = 0;
    for (size_t i = 0; i < kStreamCount; ++i) n += static_cast<size_t>(out.at[i] - streams[i]);
    return n;
  }
  // Whether the open chunk can take one more event (kReserve in every stream).
  // An event writes fewer than kReserve bytes in all (kMaxEvent and the Ext
  // bound above), so when the tightest stream has `least` bytes left, the
  // (least - kReserve) / kReserve events after this one find room too without
  // looking: the chunks are cut where they were, and the eight streams' ends
  // are compared once per up to 63 events instead of on every one (~20
  // instructions per event on the flush thread).
  bool room() noexcept {
    if (sure_room != 0) {
      --sure_room;
      return true;
    }
    size_t least;
    if (!columns) {
      least = static_cast<size_t>(buf + sizeof(buf) - out.at[0]);
    } else {
      least = kStreamPayload;
      for (size_t i = 0; i < kStreamCount; ++i) {
        const auto left = static_cast<size_t>(streams[i] + kStreamPayload - out.at[i]);
        least = left < least ? left : least;
      }
    }
    if (least < kReserve) return false;
    sure_room = static_cast<uint32_t>((least - kReserve) / kReserve);
    return true;
  }

  void seal() noexcept {
    if (!open) return;
    open = false;
    if (!columns) {
      const size_t len = static_cast<size_t>(out.at[0] - payload());
      if (len <= kEventsPrefix) return;
      write_chunk_header(buf, ChunkType::Events, 0, {payload(), len}, static_cast<uint32_t>(len));
      sink->write_chunk({buf, kChunkHeaderSize + len});
      bytes_written += kChunkHeaderSize + len;
      return;
    }
    size_t lengths[kStreamCount], total = 0;
    for (size_t i = 0; i < kStreamCount; ++i) total += lengths[i] = static_cast<size_t>(out.at[i] - streams[i]);
    if (total == 0) return;
    // u64 start time | u64 alloc-id base | u8 stream count | varint lengths | streams
    uint8_t* const start = columns_buf + kChunkHeaderSize;
    uint8_t* p = put_u64(start, chunk_us);
    p = put_u64(p, chunk_id);
    *p++ = static_cast<uint8_t>(kStreamCount);
    for (size_t n : lengths) p = put_varint(p, n);
    for (size_t i = 0; i < kStreamCount; ++i) {
      std::memcpy(p, streams[i], lengths[i]);
      p += lengths[i];
    }
    const size_t n = static_cast<size_t>(p - start);
    write_chunk_header(columns_buf, ChunkType::EventsColumns, 0, {start, n}, static_cast<uint32_t>(n));
    sink->write_chunk({columns_buf, kChunkHeaderSize + n});
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
    if (more) o[Stream::Time] = put_varint(o[Stream::Time], dt >> kDtInlineBits);
  }

  void switch_to(Out& o, ThreadId t) noexcept {
    if (t.value == thread) return;
    thread = t.value;
    const unsigned code = static_cast<unsigned>(Code::ThreadSwitch) << kCodeShift;
    if (thread < kThreadEscape) {
      *o[Stream::Head]++ = static_cast<uint8_t>(code | thread);
      return;
    }
    *o[Stream::Head]++ = static_cast<uint8_t>(code | kThreadEscape);
    o[Stream::Misc] = put_varint(o[Stream::Misc], thread);
  }

  // Opens an Ext event and writes its header; the event's fields go to the
  // returned cursor, Stream::Misc's.
  uint8_t*& ext(ExtType type, uint64_t time_ns) noexcept {
    Out& o = begin();
    timed(o, Code::Ext, time_ns);
    *o[Stream::Head]++ = static_cast<uint8_t>(type);
    return o[Stream::Misc];
  }

  // backtrace_hash(bt): a short one whole or from ShortMemo; a deeper one
  // resumed from the frames it shares with the thread bucket's previous deep
  // backtrace (the encoder sees the threads' events interleaved). What is shared is compared, or taken from the caller's hint
  // when the bucket's previous backtrace is the one the hint counts from; so a
  // bucket shared by two threads costs hashing, never a wrong hash.
  uint64_t hash_of(std::span<const uint64_t> bt, const SharedPrefix& hint) noexcept {
    const size_t n = bt.size();
    if (n <= kShortFrames) return short_hash(bt);
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

  uint64_t short_hash(std::span<const uint64_t> bt) noexcept {
    const size_t n = bt.size();
    if (n == 0) return backtrace_hash(bt);  // (an empty span's data() may be null: no memcmp)
    // Placed by the two innermost frames, where a program's sites differ: the
    // outer ones are shared (a thread's entry, main). Placed by bt[n / 2] and
    // bt[2] before, all of bench_alloc_mt's ten 5-frame sites took one entry
    // (both are the same frame there, libstdc++'s thread entry), and 5 of 6
    // lookups missed and hashed and copied their frames again.
    const uint64_t key = (bt[0] ^ bt[n > 1 ? 1 : 0] << 7) * 0x9e3779b97f4a7c15ull + n;
    ShortMemo& m = short_memo[key >> (64 - kShortMemoBits)];
    const size_t bytes = n * sizeof(uint64_t);
    if (m.n == n && std::memcmp(m.frames, bt.data(), bytes) == 0) return m.hash;
    m.hash = backtrace_hash(bt);
    m.n = static_cast<uint32_t>(n);
    std::memcpy(m.frames, bt.data(), bytes);
    return m.hash;
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
