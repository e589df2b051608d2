// The encoder's state: everything lives in fixed arrays inside the Encoder, so
// encoding never allocates. Only src/format/encoder*.cc use it; encoder.h holds
// it as a member so that a new Encoder is constant-initialised.
//
// A new State is all zero bytes (sink null, Mode::Sampled) and is not written
// again by Encoder's constexpr constructor: every member's initial value must be
// zero. (Where the natural initial value is not, the member stores it offset:
// see HashMemo::n and AllocHistory::free_for_.)
#pragma once

#include <cstring>
#include <span>

#include "format/chunk.h"
#include "format/events.h"
#include "format/frame_cache.h"
#include "format/history.h"
#include "format/varint.h"
#include "format/wire.h"

namespace memloupe::format {

struct AllocRecord;  // encoder.h

namespace encoder_detail {

inline constexpr size_t kChunkPayload = 64 * 1024;
inline constexpr size_t kEventsPrefix = 16;  // u64 start time (µs), u64 alloc-id base
// Upper bound of one event with everything it may drag along (thread switch,
// realloc prefix); the encoder never starts an event with less room left.
inline constexpr size_t kMaxEvent = 6 + 21 + 11 + 1 + 40 + 2 * kMaxVarint + kMaxFrames * 13 + 64;
static_assert(kMaxEvent < 8 * 1024);
static_assert(kMaxString + kMaxBuildId + 64 < 8 * 1024);
inline constexpr size_t kReserve = 8 * 1024;

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

// A recently hashed backtrace. Loops allocate from one site again and again,
// and comparing the frames with a remembered copy (memcmp, vectorised) costs a
// fraction of hashing them.
struct HashMemo {
  uint64_t hash = 0;
  // 0 until the first backtrace: hash_of() only looks up non-empty ones.
  uint32_t n = 0;
  uint64_t frames[kMaxFrames] = {};
};
inline constexpr unsigned kHashMemoBits = 4;

struct State {
  ChunkSink* sink = nullptr;
  Mode mode = Mode::Sampled;
  bool addresses = false;  // Mode::All with per-event addresses (Encoder::start)
  FrameCacheEncoder frames;
  AllocHistory history;
  BtEntry bt_cache[kBtCacheSize] = {};
  HashMemo hash_memo[1u << kHashMemoBits] = {};
  // The last explicitly written backtrace, outermost first, and its frames' slots.
  uint64_t prev_outer[kMaxFrames] = {};
  uint16_t prev_slots[kMaxFrames] = {};
  unsigned prev_n = 0;
  Func last_alloc_func = Func::Malloc;
  uint32_t thread = 0;
  uint64_t next_id = 0;
  uint64_t last_us = 0;
  uint64_t bytes_written = 0;
  size_t len = 0;  // payload bytes in `buf` after the chunk header
  alignas(8) uint8_t buf[kChunkHeaderSize + kChunkPayload] = {};

  uint8_t* payload() noexcept { return buf + kChunkHeaderSize; }

  // Makes room for one event and returns where it goes.
  uint8_t* begin() noexcept {
    if (len + kReserve > kChunkPayload) seal();
    if (len == 0) {
      uint8_t* p = put_u64(payload(), last_us);
      put_u64(p, next_id);
      len = kEventsPrefix;
    }
    return payload() + len;
  }
  void end(uint8_t* p) noexcept { len = static_cast<size_t>(p - payload()); }

  void seal() noexcept {
    if (len <= kEventsPrefix) return;
    write_chunk_header(buf, ChunkType::Events, 0, {payload(), len}, static_cast<uint32_t>(len));
    sink->write_chunk({buf, kChunkHeaderSize + len});
    bytes_written += kChunkHeaderSize + len;
    len = 0;
  }

  uint8_t* timed(uint8_t* p, Code code, uint64_t time_ns) noexcept {
    uint64_t t = time_ns / kTimeUnitNs;
    if (t < last_us) t = last_us;
    const uint64_t dt = t - last_us;
    last_us = t;
    const bool more = dt > 0xf;
    *p++ = static_cast<uint8_t>(static_cast<unsigned>(code) << kCodeShift | (more ? kDtMore : 0) |
                                (dt & 0xf));
    return more ? put_varint(p, dt >> kDtInlineBits) : p;
  }

  uint8_t* switch_to(uint8_t* p, ThreadId t) noexcept {
    if (t.value == thread) return p;
    thread = t.value;
    const unsigned code = static_cast<unsigned>(Code::ThreadSwitch) << kCodeShift;
    if (thread < kThreadEscape) {
      *p++ = static_cast<uint8_t>(code | thread);
      return p;
    }
    *p++ = static_cast<uint8_t>(code | kThreadEscape);
    return put_varint(p, thread);
  }

  uint8_t* ext(uint8_t* p, ExtType type, uint64_t time_ns) noexcept {
    p = timed(p, Code::Ext, time_ns);
    *p++ = static_cast<uint8_t>(type);
    return p;
  }

  // backtrace_hash(bt), remembered in a direct-mapped memo placed by the depth
  // and two frames: the allocation site's caller and one half-way out.
  uint64_t hash_of(std::span<const uint64_t> bt) noexcept {
    const size_t n = bt.size();
    if (n == 0) return backtrace_hash(bt);  // (an empty span's data() may be null: no memcmp)
    const uint64_t key = (bt[n / 2] ^ bt[n > 2 ? 2 : n - 1] << 7) * 0x9e3779b97f4a7c15ull + n;
    HashMemo& m = hash_memo[key >> (64 - kHashMemoBits)];
    const size_t bytes = bt.size() * sizeof(uint64_t);
    if (m.n == bt.size() && std::memcmp(m.frames, bt.data(), bytes) == 0) return m.hash;
    m.hash = backtrace_hash(bt);
    m.n = static_cast<uint32_t>(bt.size());
    std::memcpy(m.frames, bt.data(), bytes);
    return m.hash;
  }

  uint8_t* address(uint8_t* p, uint8_t* flags_at, uint64_t size, uint64_t addr,
                   unsigned& newest) noexcept;
  uint8_t* backtrace(uint8_t* p, std::span<const uint64_t> bt) noexcept;
  AllocId alloc(uint8_t* p, const AllocRecord& r) noexcept;
};

}  // namespace encoder_detail

using encoder_detail::BtEntry;
using encoder_detail::HashMemo;
using encoder_detail::kHashMemoBits;
using encoder_detail::kChunkPayload;
using encoder_detail::kEventsPrefix;
using encoder_detail::kReserve;

}  // namespace memloupe::format
