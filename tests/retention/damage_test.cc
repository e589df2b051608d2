// A trace whose snapshot chunk is damaged: the damage is reported with its
// offset, the other snapshots and the events still read.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "fixture.h"
#include "format/wire.h"
#include "reader/chunk_io.h"
#include "retention/snapshot_load.h"

namespace memloupe::retention {
namespace {

using recorder_test::binary;
using recorder_test::PreloadTest;
using recorder_test::TraceData;
namespace fs = std::filesystem;

std::vector<uint8_t> read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void write_all(const fs::path& p, const std::vector<uint8_t>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

class SnapshotDamageTest : public PreloadTest {};

TEST_F(SnapshotDamageTest, DamagedChunkIsReportedAndTheRestStillReads) {
  run_both({binary("retention_zoo").string()}, {"MEMLOUPE_MODE=all"});
  std::vector<uint8_t> bytes = read_all(trace_path());
  const reader::ChunkList list = reader::scan_chunks(bytes);
  ASSERT_FALSE(list.error);
  std::vector<uint64_t> snapshot_chunks;
  for (const reader::ChunkView& c : list.chunks)
    if (c.type == static_cast<uint8_t>(format::ChunkType::Snapshot)) snapshot_chunks.push_back(c.offset);
  ASSERT_EQ(snapshot_chunks.size(), 2u);  // "inside" and "exit", one chunk each
  const TraceData before = trace();

  // A flipped byte in the first snapshot's payload.
  const uint64_t payload = snapshot_chunks[0] + format::kChunkHeaderSize;
  bytes[payload + 40] ^= 0x55;
  write_all(trace_path(), bytes);

  const SnapshotSet set = load_snapshots(trace_path());
  EXPECT_NE(set.damage.find("a snapshot chunk is damaged: at offset " + std::to_string(payload)),
            std::string::npos)
      << set.damage;
  ASSERT_EQ(set.snapshots.size(), 1u);
  EXPECT_EQ(set.snapshots[0].label, "exit");
  EXPECT_FALSE(set.snapshots[0].blocks.empty());

  // The events, before and after the damaged chunk, read as before.
  const TraceData after = trace();
  EXPECT_FALSE(after.error) << after.error->message;
  EXPECT_EQ(after.allocs.size(), before.allocs.size());
  EXPECT_TRUE(after.end.has_value());
}

TEST_F(SnapshotDamageTest, CutShortSnapshotIsReported) {
  run_both({binary("retention_zoo").string()}, {"MEMLOUPE_MODE=all", "MEMLOUPE_SNAPSHOT_AT_EXIT=0"});
  std::vector<uint8_t> bytes = read_all(trace_path());
  const reader::ChunkList list = reader::scan_chunks(bytes);
  uint64_t at = 0;
  for (const reader::ChunkView& c : list.chunks)
    if (c.type == static_cast<uint8_t>(format::ChunkType::Snapshot)) at = c.offset;
  ASSERT_NE(at, 0u);
  bytes.resize(at + format::kChunkHeaderSize + 100);
  write_all(trace_path(), bytes);
  const SnapshotSet set = load_snapshots(trace_path());
  EXPECT_TRUE(set.snapshots.empty());
  EXPECT_NE(set.damage.find("at offset " + std::to_string(at + format::kChunkHeaderSize)), std::string::npos)
      << set.damage;
}

}  // namespace
}  // namespace memloupe::retention
