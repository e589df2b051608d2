// Writing small raw traces (as the recorder would) with the real Encoder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "format/encoder.h"
#include "symbolize/module_map.h"

namespace memloupe::testing {

class TraceBuilder {
 public:
  explicit TraceBuilder(format::Mode mode = format::Mode::Sampled);

  void module_load(const symbolize::Module& m, uint64_t time_ns = 0);
  void module_unload(const symbolize::Module& m, uint64_t time_ns);
  // Returns the id the trace gives the allocation.
  format::AllocId alloc(const std::vector<uint64_t>& backtrace, uint64_t size, uint64_t time_ns);
  void free(format::AllocId id, uint64_t time_ns);
  void thread(format::ThreadId thread, uint64_t time_ns, uint32_t os_tid, std::string_view name);
  void end(uint64_t time_ns);
  // A heap snapshot (its own chunks) holding these blocks, with no roots or edges.
  void snapshot(uint32_t number, bool at_exit, const std::vector<format::AllocId>& blocks, uint64_t time_ns);
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
