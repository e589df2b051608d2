// LEB128 varints and zigzag, written into caller-owned buffers (no heap; the
// encoder calls these from inside malloc). The reader has its own checked
// decoder (src/reader/cursor.h); the writer side never fails because callers
// reserve kMaxVarint bytes per varint.
#pragma once

#include <cstdint>
#include <cstring>

namespace memloupe::format {

inline constexpr unsigned kMaxVarint = 10;

// Little-endian base-128: 7 value bits per byte, high bit set on all but the last.
inline uint8_t* put_varint(uint8_t* p, uint64_t v) noexcept {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

constexpr unsigned varint_size(uint64_t v) noexcept {
  unsigned n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

// Zigzag maps small magnitudes of either sign to small unsigned values.
constexpr uint64_t zigzag(int64_t v) noexcept {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
constexpr int64_t unzigzag(uint64_t v) noexcept {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

inline uint8_t* put_u16(uint8_t* p, uint16_t v) noexcept {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
  return p + 2;
}
inline uint8_t* put_u32(uint8_t* p, uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  return p + 4;
}
inline uint8_t* put_u64(uint8_t* p, uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
  return p + 8;
}
inline uint16_t get_u16(const uint8_t* p) noexcept {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t get_u32(const uint8_t* p) noexcept {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t get_u64(const uint8_t* p) noexcept {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A string field: varint length, then the bytes, cut to `max` bytes.
inline uint8_t* put_string(uint8_t* p, const char* s, size_t n, size_t max) noexcept {
  if (n > max) n = max;
  p = put_varint(p, n);
  if (n != 0) std::memcpy(p, s, n);
  return p + n;
}

}  // namespace memloupe::format
