// Writes a heap snapshot's parts (snapshot_wire.h) into Snapshot chunks, with no
// heap: the recorder runs it inside the traced process while the other threads
// are stopped. The caller provides the chunk buffer and the sink.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "format/chunk.h"
#include "format/snapshot_wire.h"

namespace memloupe::format {

struct SnapshotBegin {
  uint64_t time_ns = 0;
  bool at_exit = false;
  std::string_view label;
  uint32_t threads = 0;
  uint32_t threads_not_stopped = 0;
};

struct SnapshotRootRecord {
  SnapshotRoot kind = SnapshotRoot::Global;
  uint32_t thread_plus_one = 0;  // 0: no ThreadId in the trace
  uint32_t os_tid = 0;
  uint64_t address = 0;
  uint64_t size = 0;
  uint64_t pc = 0;
};

// A module and a thread, for the finaliser's annex (snapshot_annex.h).
struct SnapshotModule {
  uint64_t start = 0, end = 0, load_bias = 0;
  std::string_view path;
  std::span<const uint8_t> build_id;
};
struct SnapshotThread {
  uint32_t id = 0, os_tid = 0;
  std::string_view name;
};

class SnapshotWriter {
 public:
  // `buffer` holds one chunk: kChunkHeaderSize + kSnapshotChunkPayload bytes.
  SnapshotWriter(ChunkSink& sink, uint8_t* buffer, uint32_t number) noexcept
      : sink_(sink), buf_(buffer), number_(number) {}
  static constexpr size_t kBufferBytes = kChunkHeaderSize + kSnapshotChunkPayload;

  void begin(const SnapshotBegin& b) noexcept;
  void root(const SnapshotRootRecord& r) noexcept;
  void block(uint64_t address, uint64_t size, uint64_t alloc_id) noexcept;
  // `offset` (the word's offset in its root) is written only when `from` is a
  // root: every root comes before the first edge.
  void edge(uint32_t from, uint32_t to, bool interior, uint64_t offset) noexcept;
  // Writes the End part and the last chunk, with the scan's cost.
  void end(uint64_t bytes_scanned, uint64_t stopped_ns) noexcept;

  // The finaliser's annex after the Names part (snapshot_wire.h): stacks
  // (at most kMaxAnnexFrames frames each; deeper ones are cut), then one site
  // per block, the modules, the threads; named() writes the totals and the
  // last chunk.
  static constexpr size_t kMaxAnnexFrames = 256;
  void stack(std::span<const uint64_t> frames) noexcept;
  void site(uint32_t stack_plus_one, uint64_t size) noexcept;
  void module(const SnapshotModule& m) noexcept;
  void thread(const SnapshotThread& t) noexcept;
  void named() noexcept;

  uint64_t roots() const noexcept { return roots_; }
  uint64_t blocks() const noexcept { return blocks_; }
  uint64_t edges() const noexcept { return edges_; }

 private:
  static constexpr size_t kMaxItem = 128 + 4096;  // a Begin with the longest label
  uint8_t* payload() const noexcept { return buf_ + kChunkHeaderSize; }
  uint8_t* at() const noexcept { return payload() + len_; }
  // Room for one more item of the current part (closing and emitting the chunk
  // and reopening the part if there is none).
  void reserve(SnapshotPart kind) noexcept;
  void open_part(SnapshotPart kind) noexcept;
  void close_part() noexcept;
  void emit() noexcept;
  // A part of fixed varints that ends the run of chunks (End, Named), then the chunk.
  void last_part(SnapshotPart kind, std::initializer_list<uint64_t> values) noexcept;

  ChunkSink& sink_;
  uint8_t* buf_;
  uint32_t number_;
  size_t len_ = 0;
  bool part_open_ = false;
  SnapshotPart kind_ = SnapshotPart::Begin;
  size_t count_at_ = 0;  // offset of the open part's u32 count
  uint32_t count_ = 0;
  uint64_t prev_ = 0;    // delta base of the open part
  uint64_t roots_ = 0, blocks_ = 0, edges_ = 0;
  uint64_t stacks_ = 0, sites_ = 0, modules_ = 0, threads_ = 0;
};

}  // namespace memloupe::format
