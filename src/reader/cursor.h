// A bounds-checked reader of little-endian fields over one chunk's payload.
// Every accessor returns false instead of reading past the end; the caller then
// reports error(what), which names the byte offset in the file (for a compressed
// chunk: the chunk's offset and the position inside its decompressed payload).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "format/expected.h"

namespace memloupe::reader {

class Cursor {
 public:
  Cursor() = default;
  // `file_offset`: where data[0] is in the file, or, when `compressed`, where the
  // chunk is; then `payload_pos` is where data[0] is in the decompressed payload.
  Cursor(std::span<const uint8_t> data, uint64_t file_offset, bool compressed,
         size_t payload_pos = 0)
      : data_(data), base_(file_offset), compressed_(compressed), shift_(payload_pos) {}

  bool at_end() const { return pos_ == data_.size(); }
  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

  bool u8(uint8_t& v) {
    if (pos_ >= data_.size()) return false;
    v = data_[pos_++];
    return true;
  }
  bool u16(uint16_t& v) {
    if (remaining() < 2) return false;
    v = static_cast<uint16_t>(data_[pos_] | data_[pos_ + 1] << 8);
    pos_ += 2;
    return true;
  }
  bool u32(uint32_t& v) {
    uint64_t w;
    if (!fixed(4, w)) return false;
    v = static_cast<uint32_t>(w);
    return true;
  }
  bool u64(uint64_t& v) { return fixed(8, v); }

  // LEB128, at most 10 bytes, value must fit 64 bits.
  // On failure nothing is consumed, so errors point at the field's first byte.
  // Most fields of an events chunk are one byte: that case is inline and
  // branches once; the rest is out of the decoder's way, and hands its value
  // back in a register (through `v` it kept the decoder's fields in memory
  // around every read, the one-byte ones too).
  // (always_inline: as a call of its own it was ~10 instructions of every
  // Alloc's size, callgrind of (a).)
  [[gnu::always_inline]] bool varint(uint64_t& v) {
    if (pos_ < data_.size() && data_[pos_] < 0x80) [[likely]] {
      v = data_[pos_++];
      return true;
    }
    const Long r = varint_long();
    v = r.value;
    return r.ok;
  }
  struct Long {
    uint64_t value;
    bool ok;
  };
  [[gnu::noinline]] Long varint_long() {
    // Two bytes first (most of the rest: sizes to 16 KiB, references to 2047
    // blocks away), without the loop's shift and bound per byte (~45
    // instructions a field before, callgrind of (a)).
    if (remaining() >= 2 && data_[pos_] >= 0x80 && data_[pos_ + 1] < 0x80) {
      const uint64_t v = (data_[pos_] & 0x7fu) | uint64_t{data_[pos_ + 1]} << 7;
      pos_ += 2;
      return {v, true};
    }
    uint64_t result = 0;
    for (unsigned shift = 0, i = 0; shift < 64; shift += 7, ++i) {
      if (pos_ + i >= data_.size()) return {0, false};
      const uint8_t b = data_[pos_ + i];
      if (shift == 63 && b > 1) return {0, false};
      result |= uint64_t{b & 0x7fu} << shift;
      if (!(b & 0x80)) {
        pos_ += i + 1;
        return {result, true};
      }
    }
    return {0, false};
  }
  // A varint that must be <= max.
  template <class T>
  bool varint_max(T& v, uint64_t max) {
    uint64_t w;
    const size_t start = pos_;
    if (!varint(w)) return false;
    if (w > max) {
      pos_ = start;
      return false;
    }
    v = static_cast<T>(w);
    return true;
  }

  bool bytes(size_t n, std::span<const uint8_t>& out) {
    if (remaining() < n) return false;
    out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  // varint length (<= max) then that many bytes.
  bool string(std::string_view& out, uint32_t max) {
    uint64_t n;
    std::span<const uint8_t> b;
    const size_t start = pos_;
    if (!varint(n) || n > max || !bytes(n, b)) {
      pos_ = start;
      return false;
    }
    out = {reinterpret_cast<const char*>(b.data()), b.size()};
    return true;
  }

  // Where the next byte is, as text for messages.
  std::string where() const { return where_at(pos_); }
  std::string where_at(size_t pos) const {
    if (compressed_)
      return "at offset " + std::to_string(base_) + " (compressed chunk, byte " +
             std::to_string(shift_ + pos) + " of its payload)";
    return "at offset " + std::to_string(base_ + pos);
  }
  uint64_t file_offset() const { return compressed_ ? base_ : base_ + pos_; }
  std::span<const uint8_t> data() const { return data_; }
  // A cursor over the next `n` bytes (which this one skips), or false if fewer remain.
  bool split(size_t n, Cursor& out) {
    if (remaining() < n) return false;
    out = compressed_ ? Cursor(data_.subspan(pos_, n), base_, true, shift_ + pos_)
                      : Cursor(data_.subspan(pos_, n), base_ + pos_, false);
    pos_ += n;
    return true;
  }
  // "at offset N: expected <what>"
  Error expected(std::string_view what) const { return expected_at(pos_, what); }
  Error expected_at(size_t pos, std::string_view what) const {
    return Error{where_at(pos) + ": expected " + std::string(what),
                 compressed_ ? base_ : base_ + pos};
  }

 private:
  bool fixed(unsigned n, uint64_t& v) {
    if (remaining() < n) return false;
    v = 0;
    for (unsigned i = n; i-- > 0;) v = v << 8 | data_[pos_ + i];
    pos_ += n;
    return true;
  }

  std::span<const uint8_t> data_;
  uint64_t base_ = 0;
  bool compressed_ = false;
  size_t shift_ = 0;
  size_t pos_ = 0;
};

}  // namespace memloupe::reader
