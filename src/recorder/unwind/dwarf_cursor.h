// A bounds-checked reader over bytes of a loaded module (.eh_frame, .eh_frame_hdr).
//
// Every read is checked against [begin, end), the readable segment the bytes live in,
// so a corrupt or unexpected table makes the cursor fail (ok() == false) instead of
// reading outside the mapping. Reads never allocate and never fault.
#pragma once

#include <cstdint>
#include <cstring>

namespace memloupe::recorder::unwind_detail {

// DW_EH_PE_* pointer encodings (LSB Core, .eh_frame).
namespace pe {
inline constexpr uint8_t kAbsptr = 0x00, kUleb128 = 0x01, kUdata2 = 0x02, kUdata4 = 0x03,
                         kUdata8 = 0x04, kSleb128 = 0x09, kSdata2 = 0x0a, kSdata4 = 0x0b,
                         kSdata8 = 0x0c;
inline constexpr uint8_t kPcrel = 0x10, kDatarel = 0x30;
inline constexpr uint8_t kIndirect = 0x80, kOmit = 0xff;
}  // namespace pe

class DwarfCursor {
 public:
  DwarfCursor(uintptr_t pos, uintptr_t begin, uintptr_t end)
      : pos_(pos), end_(end), ok_(pos >= begin && pos <= end) {}

  bool ok() const { return ok_; }
  uintptr_t pos() const { return pos_; }
  uintptr_t end() const { return end_; }
  bool at_end() const { return pos_ >= end_; }

  // Consumes the next `len` bytes and returns a cursor over them; fails both
  // cursors if that leaves the bounds.
  DwarfCursor sub(uint64_t len) {
    if (!ok_ || len > end_ - pos_) {
      ok_ = false;
      return DwarfCursor(0, 1, 0);  // a failed cursor
    }
    const uintptr_t begin = pos_;
    pos_ += len;
    return DwarfCursor(begin, begin, begin + len);
  }

  void skip(uint64_t n) {
    if (!ok_ || n > end_ - pos_) {
      ok_ = false;
      return;
    }
    pos_ += n;
  }

  template <typename T>
  T fixed() {
    T v{};
    if (!ok_ || end_ - pos_ < sizeof(T)) {
      ok_ = false;
      return v;
    }
    std::memcpy(&v, reinterpret_cast<const void*>(pos_), sizeof(T));
    pos_ += sizeof(T);
    return v;
  }

  uint8_t u8() { return fixed<uint8_t>(); }

  uint64_t uleb() {
    uint64_t v = 0;
    for (unsigned shift = 0; ok_; shift += 7) {
      const uint8_t b = u8();
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      if ((b & 0x80) == 0) break;
    }
    return v;
  }

  int64_t sleb() {
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b = 0x80;
    while (ok_ && (b & 0x80) != 0) {
      b = u8();
      if (shift < 64) v |= uint64_t{b & 0x7fu} << shift;
      shift += 7;
    }
    if (shift < 64 && (b & 0x40) != 0) v |= ~uint64_t{0} << shift;
    return static_cast<int64_t>(v);
  }

  // A pointer in encoding `enc`; `datarel` is the base for DW_EH_PE_datarel (the
  // start of .eh_frame_hdr). Indirect pointers are not followed (the unwinder never
  // needs their targets), and unknown encodings fail the cursor.
  uint64_t encoded(uint8_t enc, uintptr_t datarel = 0) {
    if (enc == pe::kOmit) return 0;
    const uintptr_t at = pos_;
    uint64_t v = 0;
    switch (enc & 0x0f) {
      case pe::kAbsptr: v = fixed<uint64_t>(); break;
      case pe::kUleb128: v = uleb(); break;
      case pe::kUdata2: v = fixed<uint16_t>(); break;
      case pe::kUdata4: v = fixed<uint32_t>(); break;
      case pe::kUdata8: v = fixed<uint64_t>(); break;
      case pe::kSleb128: v = static_cast<uint64_t>(sleb()); break;
      case pe::kSdata2: v = static_cast<uint64_t>(int64_t{fixed<int16_t>()}); break;
      case pe::kSdata4: v = static_cast<uint64_t>(int64_t{fixed<int32_t>()}); break;
      case pe::kSdata8: v = fixed<uint64_t>(); break;
      default: ok_ = false; return 0;
    }
    switch (enc & 0x70) {
      case 0: break;
      case pe::kPcrel: v += at; break;
      case pe::kDatarel: v += datarel; break;
      default: ok_ = false; return 0;  // textrel/funcrel/aligned: not used on x86-64
    }
    return v;
  }

 private:
  uintptr_t pos_, end_;
  bool ok_;
};

}  // namespace memloupe::recorder::unwind_detail
