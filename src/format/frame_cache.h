// The encoder's frame cache (memtrace's, adapted): 2^14 slots, 2-way
// skewed-associative, each slot holding a return address and a prediction of
// the frame that followed it last time (the next frame inward).
//
// A backtrace's frames past the common prefix are written outermost first as
// u16 codewords:
//
//     15            2 1 0
//    +---------------+---+
//    |     slot      |tag|   tag 0: hit, the frame is loc[slot]
//    +---------------+---+   tag 1: hit, then 1 predicted frame
//                            tag 2: hit, then u8 n predicted frames (n <= 255)
//                            tag 3: miss; zigzag varint (frame - outer neighbour)
//                                   follows and is stored in loc[slot]
//
// Decoding (the reader never hashes, so placement and eviction are the
// encoder's business): ctx starts at the slot of the last common-prefix frame
// (slot 0 when there is none). For each codeword: next[ctx] = slot; on a miss
// loc[slot] = literal; emit loc[slot]; ctx = slot; then for each predicted frame
// ctx = next[ctx] and emit loc[ctx].
#pragma once

#include <cstdint>

#include "format/wire.h"

namespace memloupe::format {

class FrameCacheEncoder {
 public:
  constexpr FrameCacheEncoder() noexcept = default;

  // Encodes frames outer[from..n) as codewords at `out` (at most 13 bytes per
  // frame), starting from predictor context `ctx`. Stores each frame's slot in
  // slots[i]. Returns the end of the written bytes.
  uint8_t* encode(const uint64_t* outer, unsigned from, unsigned n, uint16_t ctx,
                  uint16_t* slots, uint8_t* out) noexcept;

  // Reads for tests: the frame a slot holds and its prediction.
  uint64_t loc(unsigned slot) const noexcept { return loc_[slot]; }
  uint16_t next(unsigned slot) const noexcept { return next_[slot]; }

 private:
  static unsigned hash1(uint64_t x) noexcept {
    return static_cast<unsigned>((x * 0x9e3779b97f4a7c15ull) >> (64 - kFrameCacheBits));
  }
  static unsigned hash2(uint64_t x) noexcept {
    x ^= x >> 23;
    return static_cast<unsigned>((x * 0xc2b2ae3d27d4eb4full) >> (64 - kFrameCacheBits));
  }

  uint64_t loc_[kFrameCacheSize] = {};
  uint16_t next_[kFrameCacheSize] = {};
  uint32_t date_[kFrameCacheSize] = {};  // last use, for choosing which way to evict
  uint32_t clock_ = 0;
};

}  // namespace memloupe::format
