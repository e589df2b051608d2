// EventDecoder: the backtraces of allocation events (the mirror of
// Encoder::State::backtrace and FrameCacheEncoder::encode). alloc() and
// address() are in event_decoder.cc, where next() inlines them.
#include <string>

#include "format/varint.h"
#include "reader/event_decoder.h"

namespace memloupe::reader {

using format::Code;
using format::Func;
using S = format::Stream;

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

template std::optional<Error> EventDecoder::backtrace(Streams&);
template std::optional<Error> EventDecoder::backtrace(TappedStreams&);

}  // namespace memloupe::reader
