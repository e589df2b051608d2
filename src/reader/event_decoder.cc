#include "reader/event_decoder.h"

#include <string>

#include "format/varint.h"

namespace memloupe::reader {

using format::Code;
using format::ExtType;
using format::Func;

EventDecoder::EventDecoder(format::Mode mode)
    : mode_(mode),
      loc_(new uint64_t[format::kFrameCacheSize]()),
      next_(new uint16_t[format::kFrameCacheSize]()),
      bt_cache_(format::kBtCacheSize),
      history_(std::make_unique<format::AllocHistory>()) {
  bt_.reserve(format::kMaxFrames);
}

std::optional<Error> EventDecoder::begin_chunk(Cursor& c) {
  uint64_t start_us, id_base;
  if (!c.u64(start_us)) return c.expected("the events chunk's start time (u64)");
  if (start_us != last_us_)
    return c.expected_at(0, "chunk start time " + std::to_string(last_us_) + " us, found " +
                                std::to_string(start_us));
  if (!c.u64(id_base)) return c.expected("the events chunk's allocation-id base (u64)");
  if (id_base != next_id_)
    return c.expected_at(8, "allocation-id base " + std::to_string(next_id_) + ", found " +
                                std::to_string(id_base));
  return std::nullopt;
}

bool EventDecoder::timed(Cursor& c, uint8_t arg, uint64_t& time_ns) {
  uint64_t dt = arg & 0xf;
  if (arg & format::kDtMore) {
    uint64_t high;
    // The time must stay representable in ns.
    if (!c.varint_max(high, (~uint64_t{0} / format::kTimeUnitNs) >> format::kDtInlineBits))
      return false;
    dt |= high << format::kDtInlineBits;
  }
  if (dt > ~uint64_t{0} / format::kTimeUnitNs - last_us_) return false;
  last_us_ += dt;
  time_ns = last_us_ * format::kTimeUnitNs;
  return true;
}

std::optional<Error> EventDecoder::block(Cursor& c, uint64_t ref, size_t at, uint64_t& id) {
  const uint64_t n = ref >> format::kRefBits;
  if (ref & 1) {
    if (n >= next_id_)
      return c.expected_at(at, "a relative allocation id below " + std::to_string(next_id_));
    id = next_id_ - 1 - n;
    return std::nullopt;
  }
  id = history_->id_of_rank(n, next_id_);
  if (id == format::AllocHistory::kNoRank)
    return c.expected_at(at, "a live rank naming a live recent allocation (" + std::to_string(n) +
                                 " is too large)");
  return std::nullopt;
}

const format::Event* EventDecoder::next(Cursor& c, std::optional<Error>& err) {
  if (has_pending_) {
    has_pending_ = false;
    event_ = pending_alloc_;
    return &event_;
  }
  for (;;) {
    const size_t start = c.pos();
    uint8_t h;
    if (!c.u8(h)) return nullptr;  // end of chunk
    const Code code = static_cast<Code>(h >> format::kCodeShift);
    const uint8_t arg = h & 0x1f;
    switch (code) {
      case Code::ThreadSwitch:
        if (arg == format::kThreadEscape) {
          if (!c.varint_max(thread_, UINT32_MAX)) {
            err = c.expected("a thread id (varint, 32 bits)");
            return nullptr;
          }
        } else {
          thread_ = arg;
        }
        continue;
      case Code::AllocCached:
      case Code::AllocCachedX:
      case Code::Alloc: {
        format::Alloc a;
        if ((err = alloc(c, code, arg, a))) return nullptr;
        event_ = a;
        return &event_;
      }
      case Code::Free: {
        format::Free f;
        uint64_t v;
        if (!timed(c, arg, f.time_ns)) {
          err = c.expected("a time delta (varint)");
          return nullptr;
        }
        const size_t id_at = c.pos();
        uint64_t id;
        if (!c.varint(v)) {
          err = c.expected("a block reference (varint)");
          return nullptr;
        }
        if ((err = block(c, v >> 1, id_at, id))) return nullptr;
        f.func = history_->predicted_free_func(id, next_id_);
        if (v & 1) {
          uint8_t fn;
          if (!c.u8(fn) || !format::func_valid(fn)) {
            err = c.expected("a function number below " + std::to_string(format::kFuncCount));
            return nullptr;
          }
          f.func = static_cast<Func>(fn);
        }
        history_->on_free(id, next_id_, f.func, false);
        f.id = format::AllocId{id};
        f.thread = format::ThreadId{thread_};
        event_ = f;
        return &event_;
      }
      case Code::ReallocOf: {
        format::Free f;
        uint64_t rel;
        if (!timed(c, arg, f.time_ns)) {
          err = c.expected("a time delta (varint)");
          return nullptr;
        }
        const size_t ref_at = c.pos();
        uint64_t old;
        if (!c.varint(rel)) {
          err = c.expected("a block reference (varint)");
          return nullptr;
        }
        if ((err = block(c, rel, ref_at, old))) return nullptr;
        // The free half is applied first, as the encoder does (it may predict the
        // new block's address). Its function does not matter to the history.
        history_->on_free(old, next_id_, Func::Realloc, true);
        uint8_t h2 = 0xff;
        const size_t alloc_at = c.pos();
        (void)c.u8(h2);
        const Code code2 = static_cast<Code>(h2 >> format::kCodeShift);
        if (code2 != Code::Alloc && code2 != Code::AllocCached && code2 != Code::AllocCachedX) {
          err = c.expected_at(alloc_at, "the allocation event of a realloc");
          return nullptr;
        }
        pending_alloc_ = {};
        if ((err = alloc(c, code2, h2 & 0x1f, pending_alloc_))) return nullptr;
        pending_alloc_.realloc_of = format::AllocId{old};
        f.id = format::AllocId{old};
        f.thread = format::ThreadId{thread_};
        f.func = pending_alloc_.func;
        has_pending_ = true;
        event_ = f;
        return &event_;
      }
      case Code::Ext:
        if ((err = ext(c, arg))) return nullptr;
        return &event_;
      default:
        err = c.expected_at(start, "an event code (0-6), found " + std::to_string(h >> 5));
        return nullptr;
    }
  }
}

}  // namespace memloupe::reader
