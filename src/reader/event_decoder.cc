#include "reader/event_decoder.h"

#include <string>

#include "format/varint.h"

namespace memloupe::reader {

using format::Code;
using format::Func;
using S = format::Stream;

EventDecoder::EventDecoder(const format::TraceInfo& info)
    : addresses_(info.mode == format::Mode::All && info.addresses),
      version_(info.version),
      loc_(new uint64_t[format::kFrameCacheSize]()),
      next_(new uint16_t[format::kFrameCacheSize]()),
      bt_cache_(format::kBtCacheSize),
      history_(std::make_unique<format::AllocHistory>()),
      unit_ns_(info.time_unit_ns()),
      max_ticks_(~uint64_t{0} / unit_ns_) {
  bt_.reserve(format::kMaxFrames);
}

std::optional<Error> EventDecoder::begin_chunk(Cursor& c) {
  uint64_t start, id_base;
  if (!c.u64(start)) return c.expected("the events chunk's start time (u64)");
  if (start != last_tick_)
    return c.expected_at(0, "chunk start time " + std::to_string(last_tick_) + " ticks, found " +
                                std::to_string(start));
  if (!c.u64(id_base)) return c.expected("the events chunk's allocation-id base (u64)");
  if (id_base != next_id_)
    return c.expected_at(8, "allocation-id base " + std::to_string(next_id_) + ", found " +
                                std::to_string(id_base));
  return std::nullopt;
}

template <class In>
std::optional<Error> EventDecoder::timed_long(In& in, uint8_t arg, uint64_t& time_ns) {
  uint64_t dt = arg & 0xf;
  const uint64_t max_ticks = max_ticks_;
  if (arg & format::kDtMore) {
    uint64_t high;
    if (!in.varint_max(S::Time, high, max_ticks >> format::kDtInlineBits))
      return in.expected(S::Time, "a time delta (varint)");
    dt |= high << format::kDtInlineBits;
  }
  if (dt > max_ticks - last_tick_)
    return in.expected(S::Time, "a time delta that keeps the time below 2^64 ns");
  last_tick_ += dt;
  time_ns = last_tick_ * unit_ns_;
  return std::nullopt;
}

// `low_bits` flag bits sit below the reference in the varint (a Free has one).
template <class In>
std::optional<Error> EventDecoder::block(In& in, unsigned low_bits, uint64_t& raw,
                                         uint64_t& id) {
  const size_t at = in.pos(S::Ref);
  if (!in.varint(S::Ref, raw)) return in.expected(S::Ref, "a block reference (varint)");
  const uint64_t r = raw >> low_bits;
  id = history_->resolve_ref(r, next_id_, thread_);
  if (id != format::AllocHistory::kNoId) return std::nullopt;
  return in.expected_at(S::Ref, at, "a block reference naming an allocation (kind " +
                                        std::to_string(r & 3) + ", count " +
                                        std::to_string(r >> 2) + ", " + std::to_string(next_id_) +
                                        " allocations so far)");
}

template <class In>
std::optional<Error> EventDecoder::free(In& in, uint8_t arg) {
  format::Free& f = event_.emplace<format::Free>();  // in place: see next()
  if (auto e = timed(in, arg, f.time_ns)) return e;
  uint64_t v, id;
  if (auto e = block(in, 1, v, id)) return e;
  f.func = history_->predicted_free_func(id, next_id_);
  if (v & 1) {
    uint8_t fn;
    if (!in.u8(S::Ref, fn) || !format::func_valid(fn))
      return in.expected(S::Ref, "a function number below " + std::to_string(format::kFuncCount));
    f.func = static_cast<Func>(fn);
  }
  history_->on_free(id, next_id_, f.func, false, thread_);
  f.id = format::AllocId{id};
  f.thread = format::ThreadId{thread_};
  return std::nullopt;
}

// ReallocOf and the Alloc that must follow it: delivered as the old block's Free,
// then (on the next call) the new block's Alloc.
template <class In>
std::optional<Error> EventDecoder::realloc(In& in, uint8_t arg) {
  format::Free& f = event_.emplace<format::Free>();
  if (auto e = timed(in, arg, f.time_ns)) return e;
  uint64_t ref, old;
  if (auto e = block(in, 0, ref, old)) return e;
  // The free half is applied first, as the encoder does (it may predict the new
  // block's address). Its function does not matter to the history.
  history_->on_free(old, next_id_, Func::Realloc, true, thread_);
  uint8_t h = 0xff;
  const size_t at = in.pos(S::Head);
  (void)in.u8(S::Head, h);
  const Code code = static_cast<Code>(h >> format::kCodeShift);
  if (code != Code::Alloc && code != Code::AllocCached && code != Code::AllocCachedX)
    return in.expected_at(S::Head, at, "the allocation event of a realloc");
  // (alloc() sets every field of pending_alloc_ but realloc_of, set below.)
  if (auto e = alloc(in, code, h & 0x1f, pending_alloc_)) return e;
  pending_alloc_.realloc_of = format::AllocId{old};
  f.id = format::AllocId{old};
  f.thread = format::ThreadId{thread_};
  f.func = pending_alloc_.func;
  has_pending_ = true;
  return std::nullopt;
}

template <class In>
const format::Event* EventDecoder::next(In& in, std::optional<Error>& err) {
  if (has_pending_) {
    has_pending_ = false;
    event_ = pending_alloc_;
    return &event_;
  }
  for (;;) {
    const size_t start = in.pos(S::Head);
    uint8_t h;
    if (!in.u8(S::Head, h)) {  // end of the chunk: every stream must be used up
      if (const S s = in.unfinished(); s != S::Count)
        err = in.expected(s, "the end of stream " + std::to_string(static_cast<int>(s)) +
                                 " with the last event");
      return nullptr;
    }
    const Code code = static_cast<Code>(h >> format::kCodeShift);
    const uint8_t arg = h & 0x1f;
    switch (code) {
      case Code::ThreadSwitch:
        if (arg != format::kThreadEscape) {
          thread_ = arg;
        } else if (!in.varint_max(S::Misc, thread_, UINT32_MAX)) {
          err = in.expected(S::Misc, "a thread id (varint, 32 bits)");
          return nullptr;
        }
        continue;
      case Code::AllocCached:
      case Code::AllocCachedX:
      case Code::Alloc:
        // Built in place: a local event copied into the variant is read back
        // 16 bytes at a time right after its fields were stored one by one, a
        // store-forwarding stall per event (half of free()'s time on an `--all` trace).
        if ((err = alloc(in, code, arg, fresh_alloc()))) return nullptr;
        return &event_;
      case Code::Free:
        if ((err = free(in, arg))) return nullptr;
        return &event_;
      case Code::ReallocOf:
        if ((err = realloc(in, arg))) return nullptr;
        return &event_;
      case Code::Ext:
        if ((err = ext(in, arg))) return nullptr;
        return &event_;
      default:
        err = in.expected_at(S::Head, start, "an event code (0-6), found " + std::to_string(h >> 5));
        return nullptr;
    }
  }
}

// The two forms of the field streams (streams.h): the readers' and the transposer's.
template const format::Event* EventDecoder::next(Streams&, std::optional<Error>&);
template const format::Event* EventDecoder::next(TappedStreams&, std::optional<Error>&);
template std::optional<Error> EventDecoder::timed_long(Streams&, uint8_t, uint64_t&);
template std::optional<Error> EventDecoder::timed_long(TappedStreams&, uint8_t, uint64_t&);

}  // namespace memloupe::reader
