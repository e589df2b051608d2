// EventDecoder: allocation events and their backtraces (the mirror of
// Encoder::State::alloc/backtrace and FrameCacheEncoder::encode).
#include <string>

#include "format/varint.h"
#include "reader/event_decoder.h"

namespace memloupe::reader {

using format::Code;
using format::Func;
using S = format::Stream;

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
  if (!addresses_ && form != 0)
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
std::optional<Error> EventDecoder::backtrace(In& in) {
  unsigned common, fresh;
  if (!in.varint_max(S::Stack, common, prev_n_))
    return in.expected(S::Stack, "a common backtrace prefix of at most " +
                                     std::to_string(prev_n_) + " frames");
  if (!in.varint_max(S::Stack, fresh, format::kMaxFrames - common))
    return in.expected(S::Stack, "a count of new frames (at most " +
                                     std::to_string(format::kMaxFrames - common) + ")");
  const unsigned n = common + fresh;
  unsigned i = common;
  uint16_t ctx = common ? prev_slots_[common - 1] : 0;
  while (i < n) {
    const size_t at = in.pos(S::Stack);
    uint16_t cw;
    if (!in.u16(S::Stack, cw)) return in.expected(S::Stack, "a frame codeword (u16)");
    const uint16_t slot = cw >> 2;
    const unsigned tag = cw & 3;
    next_[ctx] = slot;
    if (tag == 3) {
      uint64_t delta;
      if (!in.varint(S::Stack, delta)) return in.expected(S::Stack, "a frame address (zigzag varint)");
      const uint64_t ref = i ? prev_outer_[i - 1] : 0;
      loc_[slot] = ref + static_cast<uint64_t>(format::unzigzag(delta));
    }
    unsigned k = tag == 1 ? 1 : 0;
    if (tag == 2) {
      uint8_t kk;
      if (!in.u8(S::Stack, kk)) return in.expected(S::Stack, "a prediction count (u8)");
      k = kk;
    }
    if (1 + k > n - i)
      return in.expected_at(S::Stack, at, "at most " + std::to_string(n - i) +
                                              " frames, codeword gives " + std::to_string(1 + k));
    prev_outer_[i] = loc_[slot];
    prev_slots_[i++] = slot;
    ctx = slot;
    for (; k > 0; --k) {
      ctx = next_[ctx];
      prev_outer_[i] = loc_[ctx];
      prev_slots_[i++] = ctx;
    }
  }
  prev_n_ = n;
  fresh_frames_ = n - common;  // the outer `common` frames are the previous backtrace's
  bt_.resize(n);
  for (unsigned j = 0; j < n; ++j) bt_[j] = prev_outer_[n - 1 - j];
  return std::nullopt;
}

template std::optional<Error> EventDecoder::alloc(Streams&, Code, uint8_t, format::Alloc&);
template std::optional<Error> EventDecoder::alloc(TappedStreams&, Code, uint8_t, format::Alloc&);

}  // namespace memloupe::reader
