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
      loc_(zeroed_array<uint64_t>(format::kFrameCacheSize)),
      next_(zeroed_array<uint16_t>(format::kFrameCacheSize)),
      bt_cache_(format::kBtCacheSize),
      history_(zeroed_object<format::AllocHistory>()),
      unit_ns_(info.time_unit_ns()),
      max_ticks_(~uint64_t{0} / unit_ns_) {
  bt_.reserve(format::kMaxFrames);
  if (version_ < 4) history_->use_v3_refs();
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
  // Version 5's lanes start anew in every chunk, each at thread 0 (format/lanes.h).
  run_left_ = 0;
  lane_ = 0;
  lane_thread_.fill(0);
  return std::nullopt;
}

// The next run of a laned chunk from its order stream (false: none, the end of
// the chunk, or damage in `err`); a chunk without lanes is one run.
template <class In>
bool EventDecoder::next_run(In& in, std::optional<Error>& err) {
  if (!in.laned()) {
    run_left_ = ~uint64_t{0};
    return true;
  }
  Cursor& order = in.order();
  if (order.at_end()) {  // the end of the chunk: every stream must be used up
    err = in.unfinished();
    return false;
  }
  const size_t at = order.pos();
  uint64_t v;
  if (!order.varint(v)) {
    err = order.expected("an order stream entry (varint)");
    return false;
  }
  const unsigned lane = v & (format::kMaxLanes - 1);
  if (lane >= in.lane_count()) {
    err = order.expected_at(at, "a lane below the chunk's " + std::to_string(in.lane_count()) + ", found " +
                                    std::to_string(lane));
    return false;
  }
  run_left_ = (v >> format::kLaneBits) + 1;
  lane_ = lane;
  thread_ = lane_thread_[lane];
  in.select_lane(lane);
  return true;
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
  format::Free& f = *free_;  // in place: see next()
  if (auto e = timed(in, arg, f.time_ns)) return e;
  uint64_t v = 0, id = 0;  // (set by block(); zero for -Wmaybe-uninitialized)
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

template <class In>
std::optional<Error> EventDecoder::address(In& in, unsigned form, uint64_t size,
                                           uint64_t& addr) {
  uint64_t v = 0;
  if (form != static_cast<unsigned>(format::AddrForm::Freed) && !in.varint(S::Addr, v))
    return in.expected(S::Addr, "an address field (varint)");
  switch (static_cast<format::AddrForm>(form)) {
    case format::AddrForm::Freed:
    case format::AddrForm::FreedNth: {
      const uint64_t k = form == 0 ? 0 : v + 1;
      addr = k < format::kFreedDepth
                 ? history_->freed_address(size, thread_, static_cast<unsigned>(k))
                 : 0;
      if (addr == 0)
        return in.expected(S::Addr, "an address form other than 'freed block " +
                                        std::to_string(k) +
                                        "' (this thread has no such freed block of this size class)");
      break;
    }
    case format::AddrForm::NearClass:
      addr = history_->class_previous(size) + static_cast<uint64_t>(format::unzigzag(v));
      break;
    case format::AddrForm::NearCarve:
      addr = history_->thread_carve(thread_) + static_cast<uint64_t>(format::unzigzag(v));
      break;
  }
  return std::nullopt;
}

template <class In>
std::optional<Error> EventDecoder::alloc(In& in, Code code, uint8_t arg, format::Alloc& a) {
  if (auto e = timed(in, arg, a.time_ns)) return e;
  a.bytes_per_sample = rate_;
  uint8_t flags;
  BtEntry* entry = nullptr;
  if (code != Code::Alloc) {
    uint16_t word;
    if (!in.u16(S::Word, word)) return in.expected(S::Word, "a backtrace-cache slot word (u16)");
    const unsigned slot = word >> format::kSlotShift;
    entry = &bt_cache_[slot];
    if (!entry->used)
      return in.expected_at(S::Word, in.pos(S::Word) - 2,
                            "a used backtrace-cache slot; slot " + std::to_string(slot) +
                                " is empty");
    flags = word & 0xf;
    if (code == Code::AllocCachedX) {
      uint8_t more;
      const size_t at = in.pos(S::Word);
      if (!in.u8(S::Word, more) || more > 3)
        return in.expected_at(S::Word, at, "a flags byte (bits 0-1 only)");
      flags |= static_cast<uint8_t>(more << 4);
    }
    a.size = entry->size;
    a.func = entry->func;
    a.alignment = entry->align;
  } else {
    const size_t at = in.pos(S::Word);
    if (!in.u8(S::Word, flags) || (flags & (format::kHasSize | 0xc0)))
      return in.expected_at(S::Word, at, "an alloc flags byte (bits 0, 6, 7 clear)");
    flags |= format::kHasSize;
    a.func = last_alloc_func_;
    a.alignment = 0;
  }
  const unsigned form = (flags >> format::kAddrShift) & 3;
  if (form != 0 && !addresses_)  // (the form first: it is 0 in the recorder's default form)
    return in.expected(S::Word, "no address in a trace without addresses (address form bits set)");
  if ((flags & format::kHasSize) && !in.varint(S::Size, a.size))
    return in.expected(S::Size, "a size (varint)");
  if (flags & format::kHasFunc) {
    uint8_t fn;
    if (!in.u8(S::Misc, fn) || !format::func_valid(fn))
      return in.expected(S::Misc, "a function number below " + std::to_string(format::kFuncCount));
    a.func = static_cast<Func>(fn);
  }
  if ((flags & format::kHasAlign) && !in.varint_max(S::Misc, a.alignment, UINT32_MAX))
    return in.expected(S::Misc, "an alignment (varint, 32 bits)");
  a.n_samples = 1;
  if ((flags & format::kHasSamples) && !in.varint_max(S::Misc, a.n_samples, UINT32_MAX))
    return in.expected(S::Misc, "a sample count (varint, 32 bits)");
  a.address = 0;
  if (addresses_)
    if (auto e = address(in, form, a.size, a.address)) return e;

  if (entry) {
    fresh_frames_ = 0;  // the entry's frames were delivered when it was filled
  } else {
    if (auto e = backtrace(in)) return e;
    // The encoder's placement (format/encoder.cc, BtEntry).
    // Version 2 resumes the hash from the frames shared with the previous
    // explicit backtrace (the `common` just read), as the encoder did.
    const uint64_t hash =
        version_ >= 2 ? hasher_.resume(bt_.size() - fresh_frames_, bt_.size(),
                                       [this](size_t i) { return prev_outer_[i]; })
                      : format::backtrace_hash_v1(bt_);
    BtEntry& e1 = bt_cache_[format::backtrace_way1(hash)];
    BtEntry& e2 = bt_cache_[format::backtrace_way2(hash)];
    entry = !e1.used ? &e1 : !e2.used ? &e2 : e1.date <= e2.date ? &e1 : &e2;
    entry->used = true;
    entry->serial = ++fillings_;
    entry->memo = 0;
    entry->addon_memo = 0;
    entry->frames.assign(bt_.begin(), bt_.end());
  }
  key_ = BacktraceKey{entry->serial, static_cast<uint32_t>(entry - bt_cache_.data()), &entry->memo,
                      &entry->addon_memo};
  entry->size = a.size;
  entry->func = a.func;
  entry->align = a.alignment;
  entry->date = static_cast<uint32_t>(next_id_ + 1);
  last_alloc_func_ = a.func;
  a.id = format::AllocId{next_id_};
  a.thread = format::ThreadId{thread_};
  a.backtrace = entry->frames;  // valid until the next event, as promised
  history_->on_alloc(next_id_, a.size, a.address, a.func, thread_);
  ++next_id_;
  return std::nullopt;
}

// ReallocOf and the Alloc that must follow it: delivered as the old block's Free,
// then (on the next call) the new block's Alloc.
template <class In>
std::optional<Error> EventDecoder::realloc(In& in, uint8_t arg) {
  format::Free& f = *free_;
  if (auto e = timed(in, arg, f.time_ns)) return e;
  uint64_t ref = 0, old = 0;
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
  // (alloc() sets every field of the Alloc but realloc_of, set below.)
  if (auto e = alloc(in, code, h & 0x1f, *pending_)) return e;
  pending_->realloc_of = format::AllocId{old};
  f.id = format::AllocId{old};
  f.thread = format::ThreadId{thread_};
  f.func = pending_->func;
  has_pending_ = true;
  return std::nullopt;
}

template <class In>
const format::Event* EventDecoder::next(In& in, std::optional<Error>& err) {
  if (has_pending_) {
    has_pending_ = false;
    return &pending_event_;
  }
  for (;;) {
    if (run_left_ == 0 && !next_run(in, err)) [[unlikely]]
      return nullptr;
    const size_t start = in.pos(S::Head);
    uint8_t h;
    if (!in.head(h)) {
      if (in.laned()) {
        err = in.expected(S::Head, "an event header (lane " + std::to_string(lane_) + "'s run has " +
                                       std::to_string(run_left_) + " events left)");
      } else {  // end of the chunk: every stream must be used up
        err = in.unfinished();
      }
      return nullptr;
    }
    const Code code = static_cast<Code>(h >> format::kCodeShift);
    const uint8_t arg = h & 0x1f;
    if (code == Code::ThreadSwitch) {
      // Read untapped: the transposer writes the switches of its own lanes.
      if (arg != format::kThreadEscape) {
        thread_ = arg;
      } else if (!in.at(S::Misc).varint_max(thread_, UINT32_MAX)) {
        err = in.expected(S::Misc, "a thread id (varint, 32 bits)");
        return nullptr;
      }
      lane_thread_[lane_] = thread_;
      in.thread_switch(thread_);
      continue;
    }
    --run_left_;
    in.event(h, code != Code::Ext, thread_);
    // Tests by frequency, not a switch: its jump table was ~7 instructions
    // of every event (bounds test, table load, indirect jump), these are 2
    // for a Free and 4 for a cached Alloc.
    if (code == Code::Free) {
      if (auto e = free(in, arg)) [[unlikely]]
        return failed(err, e);
      return &free_event_;
    }
    if (code == Code::AllocCached || code == Code::Alloc || code == Code::AllocCachedX) {
      // Built in place: a local event copied into the variant is read back
      // 16 bytes at a time right after its fields were stored one by one, a
      // store-forwarding stall per event (half of free()'s time on an `--all` trace).
      // (Its realloc_of stays unset: only a realloc's Alloc, pending_, has one.)
      if (auto e = alloc(in, code, arg, *alloc_)) [[unlikely]]
        return failed(err, e);
      return &alloc_event_;
    }
    switch (code) {
      case Code::ReallocOf:
        if (auto e = realloc(in, arg)) [[unlikely]]
          return failed(err, e);
        return &free_event_;
      case Code::Ext:
        if (auto e = ext(in, arg)) [[unlikely]]
          return failed(err, e);
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
template bool EventDecoder::next_run(Streams&, std::optional<Error>&);
template bool EventDecoder::next_run(TappedStreams&, std::optional<Error>&);
template std::optional<Error> EventDecoder::timed_long(Streams&, uint8_t, uint64_t&);
template std::optional<Error> EventDecoder::timed_long(TappedStreams&, uint8_t, uint64_t&);

}  // namespace memloupe::reader
