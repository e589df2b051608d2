// The CTF writer's byte buffer: little-endian appends, plus patching of fields
// whose value is known only later (a packet's size, an event's codeword count).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace memloupe::reader::ctf {

class Out {
 public:
  size_t size() const { return bytes_.size(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }

  void u8(uint8_t v) { bytes_.push_back(v); }
  void u16(uint16_t v) { le(v, 2); }
  void u32(uint32_t v) { le(v, 4); }
  void u64(uint64_t v) { le(v, 8); }
  void f64(double d) {
    uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    le(bits, 8);
  }
  // The shortest of memtrace's vint forms (see Cursor::vint).
  void vint(int64_t v) {
    if (v >= 0 && v <= 252) {
      u8(static_cast<uint8_t>(v));
    } else if (v >= 0 && v <= 0xFFFF) {
      u8(253);
      u16(static_cast<uint16_t>(v));
    } else if (v >= INT32_MIN && v <= INT32_MAX) {
      u8(254);
      u32(static_cast<uint32_t>(static_cast<int32_t>(v)));
    } else {
      u8(255);
      u64(static_cast<uint64_t>(v));
    }
  }
  // Written up to the first NUL (as memtrace does), then a NUL.
  void str(std::string_view s) {
    s = s.substr(0, s.find('\0'));
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    u8(0);
  }
  void append(const Out& other) { bytes_.insert(bytes_.end(), other.bytes_.begin(), other.bytes_.end()); }

  void patch_u8(size_t at, uint8_t v) { bytes_[at] = v; }
  void patch_u16(size_t at, uint16_t v) { patch(at, v, 2); }

 private:
  void le(uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) bytes_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void patch(size_t at, uint64_t v, unsigned n) {
    for (unsigned i = 0; i < n; ++i) bytes_[at + i] = static_cast<uint8_t>(v >> (8 * i));
  }

  std::vector<uint8_t> bytes_;
};

}  // namespace memloupe::reader::ctf
