// load_snapshots on a trace written here with the real encoder and snapshot
// writer (no module files: roots are named by address): requested sizes put
// back from the Alloc events, duplicate edges merged (interior only if no
// word pointed at the start), roots without pointers left out, a global
// segment split by its words.
#include "retention/snapshot_load.h"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <span>
#include <vector>

#include "format/encoder.h"
#include "format/snapshot_annex.h"

namespace memloupe::retention {
namespace {

class Sink final : public format::ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override { bytes.insert(bytes.end(), c.begin(), c.end()); }
  std::vector<uint8_t> bytes;
};

// With `annex`, the finaliser's annex follows (format/snapshot_wire.h),
// saying requested sizes 30, 31, 32 where the events say 20, 21, 22: the
// loader then reads the annex and not the events.
std::filesystem::path write_trace(bool damage_snapshot, bool annex = false) {
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
  if (annex) {
    const std::vector<uint64_t> frames{0x401000, 0x401500};
    const std::vector<std::span<const uint64_t>> stacks{frames};
    const std::vector<uint32_t> stack_plus_one{1, 1, 0};  // block 2: no Alloc event
    const std::vector<uint64_t> sizes{30, 31, 0};
    const std::vector<format::SnapshotModule> modules{{0x400000, 0x402000, 0, "/p", {}}};
    const std::vector<format::SnapshotThread> threads{{0, 100, "boss"}};
    for (const auto& p : format::snapshot_annex_payloads(0, {{}, stacks, stack_plus_one, sizes, modules, threads}))
      format::append_chunk(sink.bytes, format::ChunkType::Snapshot, p);
  }
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

TEST(SnapshotLoadTest, WithoutAnAnnexTheEventsNameTheBlocks) {
  const auto path = write_trace(false);
  const SnapshotSet set = load_snapshots(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(set.read_events);
  ASSERT_EQ(set.sites.size(), 1u);
  EXPECT_EQ(set.sites[0].stacks, (std::vector<std::vector<uint64_t>>{{0x401000}}));
  EXPECT_EQ(set.sites[0].stack_plus_one, (std::vector<uint32_t>{1, 1, 1}));
  ASSERT_EQ(set.threads.size(), 1u);
  EXPECT_EQ(set.threads[0].os_tid, 100u);
}

TEST(SnapshotLoadTest, TheAnnexNamesTheBlocksWithoutTheEvents) {
  const auto path = write_trace(false, true);
  const SnapshotSet set = load_snapshots(path);
  std::filesystem::remove(path);
  EXPECT_EQ(set.damage, "");
  EXPECT_FALSE(set.read_events);
  ASSERT_EQ(set.snapshots.size(), 1u);
  const HeapSnapshot& s = set.snapshots[0];
  ASSERT_EQ(s.blocks.size(), 3u);
  EXPECT_EQ(s.blocks[0].size, 30u);
  EXPECT_EQ(s.blocks[1].size, 31u);
  EXPECT_EQ(s.blocks[2].size, 24u);  // no Alloc event: the extent scanned
  EXPECT_EQ(set.sites[0].stacks, (std::vector<std::vector<uint64_t>>{{0x401000, 0x401500}}));
  EXPECT_EQ(set.sites[0].stack_plus_one, (std::vector<uint32_t>{1, 1, 0}));
  ASSERT_EQ(set.modules.size(), 1u);
  EXPECT_EQ(set.modules[0].path, "/p");
  ASSERT_EQ(set.threads.size(), 1u);
  EXPECT_EQ(set.threads[0].name, "boss");
  // Roots as before; the frame's pc lies in the annex's module.
  ASSERT_EQ(s.roots.size(), 3u);
  EXPECT_EQ(s.roots[2].name, "0x401234");
  EXPECT_EQ(s.roots[2].module, "/p");
  EXPECT_EQ(s.edges.size(), 5u);
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
