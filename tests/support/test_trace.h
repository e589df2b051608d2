// Tests only: writing small `--all` (or sampled) traces with the format's real
// Encoder, call by call, for the replay's unit and end-to-end tests.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "format/encoder.h"

namespace memloupe::replay::testing {

class TestTrace {
 public:
  explicit TestTrace(format::Mode mode = format::Mode::All) : mode_(mode) {
    bytes_.resize(format::kMaxFileHeader);
    format::HeaderFields h;
    h.mode = mode;
    h.bytes_per_sample = mode == format::Mode::All ? 0 : 4096;
    h.pid = 4242;
    h.host = "testhost";
    h.executable = "/usr/bin/replay-test";
    bytes_.resize(format::encode_file_header(h, bytes_));
    encoder_ = std::make_unique<format::Encoder>(sink_, mode);
  }

  format::AllocId alloc(uint32_t thread, uint64_t size, format::Func f = format::Func::Malloc,
                        uint32_t alignment = 0) {
    return encoder_->alloc(record(thread, size, f, alignment));
  }
  format::AllocId realloc(format::AllocId old, uint32_t thread, uint64_t size,
                          format::Func f = format::Func::Realloc) {
    return encoder_->realloc(old, record(thread, size, f, 0));
  }
  void free(format::AllocId id, uint32_t thread, format::Func f = format::Func::Free) {
    encoder_->free(id, format::ThreadId{thread}, tick(), f);
  }
  void rss(uint64_t bytes) { encoder_->rss(tick(), bytes); }

  // The file so far, with a TraceEnd if `end`.
  std::vector<uint8_t> finish(bool end = true) {
    if (end) encoder_->trace_end(tick(), format::EndReason::Exit);
    encoder_->flush();
    return bytes_;
  }

 private:
  struct Sink final : format::ChunkSink {
    explicit Sink(std::vector<uint8_t>& out) : out_(out) {}
    void write_chunk(std::span<const uint8_t> chunk) noexcept override {
      out_.insert(out_.end(), chunk.begin(), chunk.end());
    }
    std::vector<uint8_t>& out_;
  };

  uint64_t tick() { return now_ += 1000; }
  format::AllocRecord record(uint32_t thread, uint64_t size, format::Func f, uint32_t alignment) {
    format::AllocRecord r;
    r.thread = format::ThreadId{thread};
    r.time_ns = tick();
    r.size = size;
    r.alignment = alignment;
    r.func = f;
    // Distinct addresses, as a real allocator's live blocks have.
    r.address = mode_ == format::Mode::All ? (next_address_ += 4096) : 0;
    return r;
  }

  format::Mode mode_;
  std::vector<uint8_t> bytes_;
  Sink sink_{bytes_};
  std::unique_ptr<format::Encoder> encoder_;  // big: on the heap
  uint64_t now_ = 0;
  uint64_t next_address_ = 1u << 20;
};

}  // namespace memloupe::replay::testing
