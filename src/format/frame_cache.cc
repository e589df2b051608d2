#include "format/frame_cache.h"

#include "format/varint.h"

namespace memloupe::format {

uint8_t* FrameCacheEncoder::encode(const uint64_t* outer, unsigned from, unsigned n,
                                   uint16_t ctx, uint16_t* slots, uint8_t* out) noexcept {
  const uint32_t now = ++clock_;
  unsigned i = from;
  while (i < n) {
    const uint64_t x = outer[i];
    const unsigned a = hash1(x), b = hash2(x);
    unsigned slot;
    bool hit = true;
    if (loc_[a] == x) {
      slot = a;
    } else if (loc_[b] == x) {
      slot = b;
    } else {
      hit = false;
      slot = date_[a] <= date_[b] ? a : b;
    }
    next_[ctx] = static_cast<uint16_t>(slot);
    date_[slot] = now;
    slots[i] = static_cast<uint16_t>(slot);
    if (!hit) {
      loc_[slot] = x;
      const uint64_t ref = i ? outer[i - 1] : 0;
      out = put_u16(out, static_cast<uint16_t>(slot << 2 | 3));
      out = put_varint(out, zigzag(static_cast<int64_t>(x - ref)));
      ctx = static_cast<uint16_t>(slot);
      ++i;
      continue;
    }
    // Follow the predictions while they are right.
    unsigned cur = slot, k = 0;
    while (i + 1 + k < n && k < kMaxPredictions && loc_[next_[cur]] == outer[i + 1 + k]) {
      cur = next_[cur];
      date_[cur] = now;
      slots[i + 1 + k] = static_cast<uint16_t>(cur);
      ++k;
    }
    const unsigned tag = k < 2 ? k : 2;
    out = put_u16(out, static_cast<uint16_t>(slot << 2 | tag));
    if (tag == 2) *out++ = static_cast<uint8_t>(k);
    ctx = static_cast<uint16_t>(cur);
    i += 1 + k;
  }
  return out;
}

}  // namespace memloupe::format
