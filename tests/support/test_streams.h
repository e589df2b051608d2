// Test helpers: seeded random event streams fed through the real Encoder, with
// the events a reader must give back (computed from the generator's own record
// of what it asked for, not by decoding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "format/encoder.h"
#include "format/events.h"

namespace memloupe::reader::testing {

// One line per event, every field included (the comparison form of the tests).
std::string event_text(const format::Event& e);

struct StreamOptions {
  format::Mode mode = format::Mode::Sampled;
  bool addresses = true;       // Mode::All: Alloc events carry addresses
  unsigned events = 2000;
  unsigned max_depth = 60;     // backtrace depth (frames past 256 are dropped)
  bool recursive = true;       // stacks with repeated frames
  bool chaotic = false;        // backtraces of random frames, no structure
  bool flush_often = false;    // many small chunks
  bool rare_events = true;     // threads, modules, markers, totals, ...
  bool huge_thread_ids = true;  // thread ids up to UINT32_MAX (else below 32)
  bool many_threads = false;   // 16 threads, more than a column chunk's lanes (format::kMaxLanes)
  bool columns = false;        // the encoder writes column chunks (the recorder's form)
  uint32_t time_unit_us = 1;   // µs per tick (a power of two): the reader gives times in whole ticks
};

struct Stream {
  std::vector<uint8_t> bytes;          // prologue, header chunk, events chunks
  std::vector<std::string> expected;   // event_text of each event, in order
  std::vector<size_t> chunk_ends;      // file offset after each chunk
  uint64_t allocs = 0;
};

Stream make_stream(uint64_t seed, const StreamOptions& options);

// Reads every event of `bytes` as text; `error` gets the reader's error, if any.
std::vector<std::string> read_all(std::vector<uint8_t> bytes, std::string* error = nullptr);

// A ChunkSink that appends to a vector.
class VectorSink final : public format::ChunkSink {
 public:
  explicit VectorSink(std::vector<uint8_t>& out, std::vector<size_t>* ends = nullptr)
      : out_(out), ends_(ends) {}
  void write_chunk(std::span<const uint8_t> chunk) noexcept override {
    out_.insert(out_.end(), chunk.begin(), chunk.end());
    if (ends_) ends_->push_back(out_.size());
  }

 private:
  std::vector<uint8_t>& out_;
  std::vector<size_t>* ends_;
};

// The standard header used by the test streams.
format::HeaderFields test_header(format::Mode mode, bool addresses = true, uint32_t time_unit_us = 1);

}  // namespace memloupe::reader::testing
