// A bounds-checked little-endian cursor over one region [begin, end) of a CTF
// file, used by every CTF parsing step.
//
// Reads never go past `end`. The first read that would fails the cursor: it
// records an error naming the file offset and what was being read, and every
// later read returns zero/empty. So a parser reads a whole record and checks
// failed() once, and it cannot loop on garbage because a failed cursor reports
// at_end().
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "format/expected.h"

namespace memloupe::reader::ctf {

class Cursor {
 public:
  Cursor(std::span<const uint8_t> file, uint64_t begin, uint64_t end)
      : file_(file), pos_(begin), end_(end) {}

  uint64_t offset() const { return pos_; }
  uint64_t end() const { return end_; }
  uint64_t remaining() const { return failed() ? 0 : end_ - pos_; }
  bool at_end() const { return remaining() == 0; }
  bool failed() const { return error_.has_value(); }
  const Error& error() const { return *error_; }

  // Records a semantic error (the first one wins).
  void fail_at(uint64_t offset, std::string message) {
    if (!error_) error_ = Error{"at offset " + std::to_string(offset) + ": " + std::move(message), offset};
  }
  void fail(std::string message) { fail_at(pos_, std::move(message)); }

  uint8_t u8(const char* what) { return static_cast<uint8_t>(le(1, what)); }
  uint16_t u16(const char* what) { return static_cast<uint16_t>(le(2, what)); }
  uint32_t u32(const char* what) { return static_cast<uint32_t>(le(4, what)); }
  uint64_t u64(const char* what) { return le(8, what); }
  double f64(const char* what) {
    uint64_t bits = le(8, what);
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }

  // memtrace's variable-length integer: a first byte 0..252 is the value; 253, 254
  // and 255 announce a u16, a sign-extended i32 and an i64.
  int64_t vint(const char* what) {
    uint8_t b = u8(what);
    switch (b) {
      case 253: return u16(what);
      case 254: return static_cast<int32_t>(u32(what));
      case 255: return static_cast<int64_t>(u64(what));
      default: return b;
    }
  }

  // A NUL-terminated string; the view points into the file.
  std::string_view str(const char* what) {
    if (failed()) return {};
    const uint8_t* start = file_.data() + pos_;
    const void* nul = std::memchr(start, 0, end_ - pos_);
    if (nul == nullptr) {
      fail("expected " + std::string(what) + " ending in NUL, but the packet ends at offset " +
           std::to_string(end_));
      return {};
    }
    size_t len = static_cast<const uint8_t*>(nul) - start;
    pos_ += len + 1;
    return {reinterpret_cast<const char*>(start), len};
  }

 private:
  uint64_t le(unsigned n, const char* what) {
    if (failed()) return 0;
    if (end_ - pos_ < n) {
      fail("expected " + std::string(what) + " (" + std::to_string(n) + " bytes), but the packet ends at offset " +
           std::to_string(end_));
      return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; ++i) v |= uint64_t{file_[pos_ + i]} << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const uint8_t> file_;
  uint64_t pos_;
  uint64_t end_;
  std::optional<Error> error_;
};

}  // namespace memloupe::reader::ctf
