// The conservative scan on memory laid out by the test: start and interior
// pointers, words just past a block, unaligned bytes, duplicates, and the
// offsets kept for roots; read back through the real decoder.
#include "recorder/snapshot/heap_scan.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "format/encoder.h"
#include "reader/snapshot_decoder.h"

namespace memloupe::recorder::snapshot {
namespace {

class Sink final : public format::ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override { bytes.insert(bytes.end(), c.begin(), c.end()); }
  std::vector<uint8_t> bytes;
};

TEST(HeapScanTest, FindsStartAndInteriorPointers) {
  // Three "blocks" inside one array: [0, 32), [64, 96) and [96, 97) bytes.
  alignas(16) static uint64_t heap[16] = {};
  const auto base = reinterpret_cast<uintptr_t>(heap);
  const LiveBlock blocks[] = {{base, base + 32, 10}, {base + 64, base + 96, 11}, {base + 96, base + 97, 12}};
  // Block 0 points at block 1's start twice and into block 2 (its only byte).
  heap[0] = base + 64;
  heap[1] = base + 64;
  heap[2] = base + 96;
  // Block 1 points inside block 0 and just past block 2 (nothing there).
  heap[8] = base + 8;
  heap[9] = base + 97;
  // A root: a pointer past the last block, an interior one, a start one.
  alignas(8) uint64_t root[4] = {base + 200, base + 70, base, 0};
  // Unaligned: a root range starting at a byte offset skips to the next word.
  Sink sink;
  sink.bytes.resize(format::kMaxFileHeader);
  format::HeaderFields h{format::Mode::All, 0, 1, 2, 3, "h", "/p", std::string_view("p\0", 2)};
  sink.bytes.resize(format::encode_file_header(h, sink.bytes));
  std::vector<uint8_t> buffer(format::SnapshotWriter::kBufferBytes);
  format::SnapshotWriter w(sink, buffer.data(), 0);
  w.begin({1, false, "t", 1, 0});
  const auto r = reinterpret_cast<uintptr_t>(root);
  w.root({format::SnapshotRoot::Global, 0, 1, r, sizeof(root), 0});
  w.root({format::SnapshotRoot::Global, 0, 1, r + 1, 8, 0});  // holds no whole aligned word
  for (const LiveBlock& b : blocks) w.block(b.address, b.end - b.address, b.alloc_id);
  HeapScan scan(blocks, 3, 2, w);
  // In two parts (as around an unreadable page): offsets stay the root's.
  scan.scan_range(0, r, r + 16, r);
  scan.scan_range(0, r + 16, r + sizeof(root), r);
  scan.scan_range(1, r + 1, r + 9);
  for (uint32_t b = 0; b < 3; ++b) scan.scan_range(2 + b, blocks[b].address, blocks[b].end);
  w.end(scan.bytes_scanned(), 0);
  EXPECT_EQ(scan.bytes_scanned(), sizeof(root) + 32 + 32);  // block 2 holds no whole word

  const reader::RawSnapshots got = reader::decode_snapshots(sink.bytes);
  ASSERT_EQ(got.damage, "");
  ASSERT_EQ(got.snapshots.size(), 1u);
  std::vector<std::tuple<uint32_t, uint32_t, bool, uint64_t>> edges;
  for (const auto& e : got.snapshots[0].edges) edges.emplace_back(e.from, e.to, e.interior, e.offset);
  const std::vector<std::tuple<uint32_t, uint32_t, bool, uint64_t>> expected = {
      {0, 1, true, 8},    // root word 1: inside block 1
      {0, 0, false, 16},  // root word 2: block 0's start
      {2, 1, false, 0},   // block 0 -> block 1 (the second copy merged)
      {2, 2, false, 0},   // block 0 -> block 2
      {3, 0, true, 0},    // block 1 -> inside block 0
  };
  EXPECT_EQ(edges, expected);
}

TEST(HeapScanTest, NoBlocksNoEdges) {
  Sink sink;
  std::vector<uint8_t> buffer(format::SnapshotWriter::kBufferBytes);
  format::SnapshotWriter w(sink, buffer.data(), 0);
  const uint64_t words[] = {1, 2, 3};
  HeapScan scan(nullptr, 0, 1, w);
  scan.scan_words(0, words, 3);
  EXPECT_EQ(w.edges(), 0u);
  EXPECT_EQ(scan.bytes_scanned(), 24u);
}

}  // namespace
}  // namespace memloupe::recorder::snapshot
