// load_snapshots on a trace written here with the real encoder and snapshot
// writer (no module files: roots are named by address): requested sizes put
// back from the Alloc events, duplicate edges merged (interior only if no
// word pointed at the start), roots without pointers left out, a global
// segment split by its words.
#include "retention/snapshot_load.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <vector>

#include "format/encoder.h"
#include "format/snapshot_writer.h"

namespace memloupe::retention {
namespace {

class Sink final : public format::ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override { bytes.insert(bytes.end(), c.begin(), c.end()); }
  std::vector<uint8_t> bytes;
};

std::filesystem::path write_trace(bool damage_snapshot) {
  Sink sink;
  sink.bytes.resize(format::kMaxFileHeader);
  format::HeaderFields h{format::Mode::All, 0, 1, 2, 3, "h", "/p", std::string_view("p\0", 2)};
  sink.bytes.resize(format::encode_file_header(h, sink.bytes));
  auto enc = std::make_unique<format::Encoder>(sink, format::Mode::All);
  enc->thread_start(format::ThreadId{0}, 0, 100);
  const uint64_t bt[] = {0x401000};
  for (uint64_t i = 0; i < 3; ++i)  // requested 20, 21, 22 bytes at 0x10000, 0x10020, 0x10040
    enc->alloc({format::ThreadId{0}, 1000 * (i + 1), 20 + i, 0x10000 + 32 * i, 0, 1, format::Func::Malloc, bt});
  enc->flush();
  const size_t snapshot_at = sink.bytes.size();
  std::vector<uint8_t> buffer(format::SnapshotWriter::kBufferBytes);
  format::SnapshotWriter w(sink, buffer.data(), 0);
  w.begin({5000, true, "exit", 1, 0});
  w.root({format::SnapshotRoot::Global, 0, 100, 0x600000, 64, 0});  // words 0 and 48 point
  w.root({format::SnapshotRoot::Stack, 1, 100, 0x7000, 32, 0x401234});
  w.root({format::SnapshotRoot::Register, 1, 100, 0, 128, 0});      // holds nothing
  for (uint64_t i = 0; i < 3; ++i) w.block(0x10000 + 32 * i, 24, i);  // usable 24
  w.edge(0, 0, false, 0);
  w.edge(0, 1, true, 48);
  w.edge(1, 2, true, 8);
  w.edge(3, 1, true, 0);   // block 0 -> inside block 1 ...
  w.edge(3, 1, false, 0);  // ... and at its start: one start edge
  w.edge(3, 1, true, 0);
  w.edge(4, 2, true, 0);
  w.end(64 + 32 + 128 + 72, 10);
  enc->trace_end(6000, format::EndReason::Exit);
  enc->flush();
  if (damage_snapshot) sink.bytes[snapshot_at + format::kChunkHeaderSize + 3] ^= 1;
  const auto path = std::filesystem::temp_directory_path() /
                    ("snapshot_load_test." + std::to_string(::getpid()) + (damage_snapshot ? ".bad" : ".ok"));
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(sink.bytes.data()),
                                             static_cast<std::streamsize>(sink.bytes.size()));
  return path;
}

TEST(SnapshotLoadTest, AssemblesTheSnapshot) {
  const auto path = write_trace(false);
  const SnapshotSet set = load_snapshots(path);
  std::filesystem::remove(path);
  EXPECT_EQ(set.damage, "");
  ASSERT_EQ(set.snapshots.size(), 1u);
  const HeapSnapshot& s = set.snapshots[0];
  EXPECT_EQ(s.label, "exit");
  EXPECT_TRUE(s.at_exit);
  EXPECT_EQ(s.time_ns, 5000u);
  ASSERT_EQ(s.blocks.size(), 3u);
  for (uint32_t b = 0; b < 3; ++b) {
    EXPECT_EQ(s.blocks[b].size, 20u + b);  // requested, not usable
    EXPECT_EQ(s.blocks[b].alloc.value, b);
  }
  // The global segment split at its two words (no module: named by address),
  // the frame (no module: its pc); the registers held nothing.
  ASSERT_EQ(s.roots.size(), 3u);
  EXPECT_EQ(s.roots[0].name, "0x600000");
  EXPECT_EQ(s.roots[1].name, "0x600030");
  EXPECT_EQ(s.roots[2].name, "0x401234");
  EXPECT_EQ(s.roots[2].kind, RootKind::Stack);
  EXPECT_EQ(s.roots[2].thread, format::ThreadId{0});
  std::vector<std::tuple<uint32_t, uint32_t, bool>> edges;
  for (const Edge& e : s.edges) edges.emplace_back(e.from, e.to, e.interior);
  const std::vector<std::tuple<uint32_t, uint32_t, bool>> expected = {
      {0, 0, false}, {1, 1, true}, {2, 2, true}, {3, 1, false}, {4, 2, true}};
  EXPECT_EQ(edges, expected);
}

TEST(SnapshotLoadTest, DamagedSnapshotIsNamedAndDropped) {
  const auto path = write_trace(true);
  const SnapshotSet set = load_snapshots(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(set.snapshots.empty());
  EXPECT_NE(set.damage.find("a snapshot chunk is damaged: at offset "), std::string::npos) << set.damage;
}

TEST(SnapshotLoadTest, MissingFile) {
  const SnapshotSet set = load_snapshots("/nonexistent/trace");
  EXPECT_TRUE(set.snapshots.empty());
  EXPECT_NE(set.damage.find("/nonexistent/trace"), std::string::npos) << set.damage;
}

}  // namespace
}  // namespace memloupe::retention
