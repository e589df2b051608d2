// Writing small raw traces (as the recorder would) with the real Encoder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/encoder.h"
#include "symbolize/module_map.h"

namespace memloupe::testing {

class TraceBuilder {
 public:
  explicit TraceBuilder(format::Mode mode = format::Mode::Sampled);

  void module_load(const symbolize::Module& m, uint64_t time_ns = 0);
  void module_unload(const symbolize::Module& m, uint64_t time_ns);
  void alloc(const std::vector<uint64_t>& backtrace, uint64_t size, uint64_t time_ns);
  void end(uint64_t time_ns);
  // Seals the chunk: everything so far is in the file.
  void flush();

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  // File offsets just after each chunk.
  const std::vector<size_t>& chunk_ends() const { return chunk_ends_; }
  uint64_t events() const { return events_; }
  void write(const std::string& path) const;

 private:
  class Sink final : public format::ChunkSink {
   public:
    explicit Sink(TraceBuilder& b) : b_(b) {}
    void write_chunk(std::span<const uint8_t> chunk) noexcept override;

   private:
    TraceBuilder& b_;
  };
  std::vector<uint8_t> bytes_;
  std::vector<size_t> chunk_ends_;
  uint64_t events_ = 0;
  Sink sink_{*this};
  std::unique_ptr<format::Encoder> encoder_;  // big: on the heap
};

}  // namespace memloupe::testing
