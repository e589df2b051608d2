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

#include "format/lanes.h"
#include "format/varint.h"
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
  void push(uint8_t b) { append(&b, 1); }
  void put_varint(uint64_t v) {
    uint8_t buf[format::kMaxVarint];
    append(buf, static_cast<size_t>(format::put_varint(buf, v) - buf));
  }
  std::span<const uint8_t> bytes() const { return {storage_.data(), used_}; }

 private:
  void grow(size_t n) { storage_.resize(std::max(storage_.size() * 2, used_ + n + 4096)); }
  std::vector<uint8_t> storage_;
  size_t used_ = 0;
};

// The column form's cursors (read_columns): [lane][stream], the streams that are
// not laned (format::laned) in lane 0 only; version 5's order stream.
struct Columns {
  std::array<std::array<Cursor, kStreams>, format::kMaxLanes> lanes{};
  Cursor order;
  unsigned lane_count = 1;
  bool laned = false;  // version 5: lanes and an order stream
};

// The transposer's output (TappedStreams' taps): one output chunk's streams as
// the decoder's reads split them off, in the column form of the trace's
// version. With lanes (version 5) it places each event as the encoder does
// (format::LaneWalk): the decoder hands it every event's header byte and every
// ThreadSwitch instead of letting them through the taps (event(),
// thread_switch()), so the input's ThreadSwitches, which are those of its
// chunks and lanes, are written anew for the output's.
class ColumnTaps {
 public:
  // `laned`: version 5's form; `bound`: the lanes a chunk may use (format::lane_bound).
  void configure(bool laned, unsigned bound) {
    laned_ = laned;
    bound_ = laned ? bound : 1;
  }
  TapBuffer& at(Stream s) { return taps_[format::laned(s) ? walk_.lane : 0][static_cast<size_t>(s)]; }
  // A ThreadSwitch read (thread `t`): kept without lanes, else left to event().
  void thread_switch(uint32_t t);
  // An event's header byte, `threaded` if it belongs to thread `t` (not Ext).
  void event(uint8_t h, bool threaded, uint32_t t);
  size_t size() const;

  // The state before an event, to drop a half-read one (rewind).
  struct Mark {
    std::array<std::array<size_t, kStreams>, format::kMaxLanes> sizes;  // lanes < walk.map.used (and lane 0)
    size_t order;
    format::LaneWalk walk;
    uint64_t switched;
  };
  void mark(Mark& m) const;
  void rewind(const Mark& m);
  // Appends the chunk's layout after the 16-byte prefix (docs/FORMAT.md §5.8).
  void write(std::vector<uint8_t>& payload);
  // Empties the taps for the next chunk, whose lanes start anew.
  void clear();

 private:
  static constexpr uint64_t kNoThread = ~uint64_t{0};
  void write_switch(uint32_t t);
  std::array<std::array<TapBuffer, kStreams>, format::kMaxLanes> taps_;  // [lane][stream]
  TapBuffer order_;
  bool laned_ = false;
  unsigned bound_ = 1;
  format::LaneWalk walk_;  // its run counts the events placed
  uint64_t switched_ = kNoThread;  // the previous threaded event's thread in this chunk
};

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
    laned_ = false;
    at_.fill(&cursors_[0]);
  }
  // Column form: one cursor per stream, per lane for the laned ones (version 5).
  void set_columns(const Columns& c) {
    columns_ = c;
    laned_ = c.laned;
    for (size_t i = 0; i < kStreams; ++i) at_[i] = &columns_.lanes[0][i];
  }
  // Every byte a field consumes is also appended to its stream's tap.
  void set_taps(ColumnTaps* taps)
    requires kTapped
  {
    taps_ = taps;
  }

  // Version 5's lanes: whether the chunk has them, its order stream, and the
  // lane the laned streams are read from.
  bool laned() const { return laned_; }
  unsigned lane_count() const { return columns_.lane_count; }
  Cursor& order() { return columns_.order; }
  void select_lane(unsigned l) {
    for (size_t i = 0; i < kStreams; ++i)
      if (format::laned(static_cast<Stream>(i))) at_[i] = &columns_.lanes[l][i];
  }
  // An event's header byte, or a ThreadSwitch's, read without its tap: the
  // decoder hands it to event() or thread_switch() when it knows which.
  bool head(uint8_t& h) { return at(Stream::Head).u8(h); }
  void event(uint8_t h, bool threaded, uint32_t t) {
    if constexpr (kTapped)
      if (taps_) taps_->event(h, threaded, t);
  }
  void thread_switch(uint32_t t) {
    if constexpr (kTapped)
      if (taps_) taps_->thread_switch(t);
  }

  // A load, not a test of the form per field read (the decoder reads ~6 an event).
  Cursor& at(Stream s) { return *at_[static_cast<size_t>(s)]; }
  bool at_end(Stream s) { return at(s).at_end(); }
  // At the end of the chunk: the first stream (in order; lane by lane, after
  // the order stream) with bytes left, as an error.
  std::optional<Error> unfinished() {
    if (!laned_) {
      for (size_t i = 0; i < kStreams; ++i)
        if (!at(static_cast<Stream>(i)).at_end())
          return at(static_cast<Stream>(i)).expected("the end of stream " + std::to_string(i) + " with the last event");
      return std::nullopt;
    }
    if (!columns_.order.at_end()) return columns_.order.expected("the end of the order stream with the last event");
    std::optional<Error> first;
    format::each_sub_stream(lane_count(), [&](Stream s, unsigned l) {
      const size_t i = static_cast<size_t>(s);
      if (!first && !columns_.lanes[l][i].at_end())
        first = columns_.lanes[l][i].expected("the end of stream " + std::to_string(i) + " (lane " +
                                              std::to_string(l) + ") with the last event");
    });
    return first;
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
      if (taps_) taps_->at(s).append(c.data().data() + before, c.pos() - before);
      return true;
    }
  }

  std::array<Cursor, kStreams> cursors_{};  // row form: [0]
  Columns columns_;
  bool laned_ = false;
  // Each stream's cursor: cursors_[0] for all in row form, the current lane's
  // for a laned stream.
  std::array<Cursor*, kStreams> at_;
  ColumnTaps* taps_ = nullptr;  // (kTapped only)
};
using Streams = BasicStreams<false>;
using TappedStreams = BasicStreams<true>;

// The column form's layout after the 16-byte prefix (docs/FORMAT.md §5.8), for
// a trace of format `version`: u8 stream count (kStreams), then (version 5) u8
// lane count and the order stream's length, then the streams' varint lengths
// (a laned stream's lane by lane), then the streams in that order, which must
// fill the rest.
std::optional<Error> read_columns(Cursor& c, uint32_t version, Columns& out);

}  // namespace memloupe::reader
