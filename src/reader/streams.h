// The field streams of an events chunk. The recorder writes each event's fields
// one after another (row form: every stream is the same byte sequence); the
// finaliser regroups them by kind into separate streams (column form, chunk type
// EventsColumns), which zstd compresses far better because each stream is
// homogeneous. The decoder reads every field through Streams, naming its
// stream, so one decoder serves both forms — and, with taps attached, it is
// also the transposer that builds the column form from the row form.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "format/wire.h"
#include "reader/cursor.h"

namespace memloupe::reader {

using format::Stream;
inline constexpr size_t kStreams = static_cast<size_t>(Stream::Count);

// One stream's bytes as the taps split them off: a field (1-10 bytes) at a
// time, millions of times per trace, so appending is an inline copy into
// storage that grows rarely (a vector's range insert is a call per field).
class TapBuffer {
 public:
  void append(const uint8_t* p, size_t n) {
    if (n == 0) return;  // (an empty field may have no data pointer, which memcpy must not get)
    if (storage_.size() - used_ < n) grow(n);
    std::memcpy(storage_.data() + used_, p, n);
    used_ += n;
  }
  size_t size() const { return used_; }
  void truncate(size_t n) { used_ = std::min(used_, n); }
  void clear() { used_ = 0; }
  std::span<const uint8_t> bytes() const { return {storage_.data(), used_}; }

 private:
  void grow(size_t n) { storage_.resize(std::max(storage_.size() * 2, used_ + n + 4096)); }
  std::vector<uint8_t> storage_;
  size_t used_ = 0;
};
using Taps = std::array<TapBuffer, kStreams>;

// kTapped: the transposer's form (TappedStreams), every field read also
// appended to its stream's tap. The decoder is compiled for each form, so the
// follower's and the readers' (Streams) do not test for taps per field read.
template <bool kTapped>
class BasicStreams {
 public:
  BasicStreams() { at_.fill(&cursors_[0]); }
  BasicStreams(const BasicStreams&) = delete;  // at_ points into this one
  BasicStreams& operator=(const BasicStreams&) = delete;

  // Row form: every stream reads from `c`.
  void set_row(const Cursor& c) {
    cursors_[0] = c;
    at_.fill(&cursors_[0]);
  }
  // Column form: one cursor per stream.
  void set_columns(const std::array<Cursor, kStreams>& c) {
    cursors_ = c;
    for (size_t i = 0; i < kStreams; ++i) at_[i] = &cursors_[i];
  }
  // Every byte a field consumes is also appended to taps[stream].
  void set_taps(Taps* taps)
    requires kTapped
  {
    taps_ = taps;
  }

  // A load, not a test of the form per field read (the decoder reads ~6 an event).
  Cursor& at(Stream s) { return *at_[static_cast<size_t>(s)]; }
  bool at_end(Stream s) { return at(s).at_end(); }
  // The first stream (in order) with bytes left, or Stream::Count if none.
  Stream unfinished() {
    for (size_t i = 0; i < kStreams; ++i)
      if (!at(static_cast<Stream>(i)).at_end()) return static_cast<Stream>(i);
    return Stream::Count;
  }

  bool u8(Stream s, uint8_t& v) { return tap(s, [&](Cursor& c) { return c.u8(v); }); }
  bool u16(Stream s, uint16_t& v) { return tap(s, [&](Cursor& c) { return c.u16(v); }); }
  bool varint(Stream s, uint64_t& v) { return tap(s, [&](Cursor& c) { return c.varint(v); }); }
  template <class T>
  bool varint_max(Stream s, T& v, uint64_t max) {
    return tap(s, [&](Cursor& c) { return c.varint_max(v, max); });
  }
  bool bytes(Stream s, size_t n, std::span<const uint8_t>& out) {
    return tap(s, [&](Cursor& c) { return c.bytes(n, out); });
  }
  bool string(Stream s, std::string_view& out, uint32_t max) {
    return tap(s, [&](Cursor& c) { return c.string(out, max); });
  }

  Error expected(Stream s, std::string_view what) { return at(s).expected(what); }
  Error expected_at(Stream s, size_t pos, std::string_view what) {
    return at(s).expected_at(pos, what);
  }
  size_t pos(Stream s) { return at(s).pos(); }

 private:
  template <class F>
  bool tap(Stream s, F read) {
    Cursor& c = at(s);
    if constexpr (!kTapped) {
      return read(c);
    } else {
      const size_t before = c.pos();
      if (!read(c)) return false;
      if (taps_) (*taps_)[static_cast<size_t>(s)].append(c.data().data() + before, c.pos() - before);
      return true;
    }
  }

  std::array<Cursor, kStreams> cursors_{};
  std::array<Cursor*, kStreams> at_;  // each stream's cursor: cursors_[0] for all in row form
  Taps* taps_ = nullptr;  // (kTapped only)
};
using Streams = BasicStreams<false>;
using TappedStreams = BasicStreams<true>;

// The column form's layout after the 16-byte prefix: u8 stream count (kStreams),
// kStreams varint lengths, then the streams in order, which must fill the rest.
std::optional<Error> read_columns(Cursor& c, std::array<Cursor, kStreams>& out);
void write_columns(std::vector<uint8_t>& payload, const Taps& streams);

}  // namespace memloupe::reader
