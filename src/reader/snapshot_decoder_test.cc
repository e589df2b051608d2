// The snapshot writer's bytes through the decoder: a round trip, and damage of
// each kind reported with its offset while the other snapshots still decode.
#include "reader/snapshot_decoder.h"

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "format/encoder.h"
#include "format/snapshot_annex.h"

namespace memloupe::reader {
namespace {

using format::SnapshotRoot;

class Sink final : public format::ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override {
    offsets.push_back(bytes.size());
    bytes.insert(bytes.end(), c.begin(), c.end());
  }
  std::vector<uint8_t> bytes;
  std::vector<size_t> offsets;  // of each snapshot chunk (the header is written directly)
};

// A prologue and header, then `snapshots` snapshots; snapshot n has n + 1 roots,
// 3 blocks and one edge per root plus a chain through the blocks. With
// `many_blocks`, the first one is big enough to span several chunks.
Sink trace(uint32_t snapshots, size_t many_blocks = 0) {
  Sink sink;
  sink.bytes.resize(format::kMaxFileHeader);
  format::HeaderFields h{format::Mode::All, 0, 1, 2, 3, "host", "/bin/p", std::string_view("p\0", 2)};
  sink.bytes.resize(format::encode_file_header(h, sink.bytes));
  std::vector<uint8_t> buffer(format::SnapshotWriter::kBufferBytes);
  for (uint32_t n = 0; n < snapshots; ++n) {
    format::SnapshotWriter w(sink, buffer.data(), n);
    w.begin({100 * n, n + 1 == snapshots, n == 0 ? "first" : "later", 2, 0});
    for (uint32_t r = 0; r <= n; ++r) w.root({SnapshotRoot::Stack, 1, 7, 0x7000 + 64 * r, 64, 0x401000 + r});
    const size_t blocks = n == 0 && many_blocks ? many_blocks : 3;
    for (size_t b = 0; b < blocks; ++b) w.block(0x10000 + 32 * b, 24, b);
    for (uint32_t r = 0; r <= n; ++r) w.edge(r, r % 3, r % 2 == 1, 8 * r);
    for (uint32_t b = 0; b + 1 < blocks; ++b) w.edge(n + 1 + b, b + 1, false, 0);
    w.end(4096, 1000);
  }
  return sink;
}

TEST(SnapshotDecoderTest, RoundTrip) {
  const Sink s = trace(2);
  const RawSnapshots got = decode_snapshots(s.bytes);
  EXPECT_EQ(got.damage, "");
  ASSERT_EQ(got.snapshots.size(), 2u);
  const RawSnapshot& a = got.snapshots[0];
  EXPECT_EQ(a.label, "first");
  EXPECT_EQ(a.time_ns, 0u);
  EXPECT_FALSE(a.at_exit);
  EXPECT_EQ(a.threads, 2u);
  EXPECT_EQ(a.bytes_scanned, 4096u);
  EXPECT_EQ(a.stopped_ns, 1000u);
  ASSERT_EQ(a.roots.size(), 1u);
  EXPECT_EQ(a.roots[0].kind, SnapshotRoot::Stack);
  EXPECT_EQ(a.roots[0].thread_plus_one, 1u);
  EXPECT_EQ(a.roots[0].os_tid, 7u);
  EXPECT_EQ(a.roots[0].pc, 0x401000u);
  ASSERT_EQ(a.blocks.size(), 3u);
  EXPECT_EQ(a.blocks[2].address, 0x10040u);
  EXPECT_EQ(a.blocks[2].extent, 24u);
  EXPECT_EQ(a.blocks[2].alloc_id, 2u);
  ASSERT_EQ(a.edges.size(), 3u);
  EXPECT_EQ(a.edges[0].from, 0u);
  EXPECT_EQ(a.edges[2].from, 2u);
  EXPECT_EQ(a.edges[2].to, 2u);
  const RawSnapshot& b = got.snapshots[1];
  EXPECT_EQ(b.label, "later");
  EXPECT_TRUE(b.at_exit);
  ASSERT_EQ(b.edges.size(), 4u);
  EXPECT_TRUE(b.edges[1].interior);
  EXPECT_EQ(b.edges[1].offset, 8u);
}

TEST(SnapshotDecoderTest, ManyChunks) {
  const Sink s = trace(1, 200'000);
  EXPECT_GE(s.offsets.size(), 2u);  // several snapshot chunks
  const RawSnapshots got = decode_snapshots(s.bytes);
  EXPECT_EQ(got.damage, "");
  ASSERT_EQ(got.snapshots.size(), 1u);
  EXPECT_EQ(got.snapshots[0].blocks.size(), 200'000u);
  EXPECT_EQ(got.snapshots[0].edges.size(), 1u + 199'999u);
}

TEST(SnapshotDecoderTest, DamagedChunkDropsItsSnapshotOnly) {
  Sink s = trace(3);
  // One chunk per snapshot. Damage the second's payload.
  const size_t at = s.offsets[1] + format::kChunkHeaderSize + 5;
  s.bytes[at] ^= 0xff;
  const RawSnapshots got = decode_snapshots(s.bytes);
  ASSERT_EQ(got.snapshots.size(), 2u);
  EXPECT_EQ(got.snapshots[0].number, 0u);
  EXPECT_EQ(got.snapshots[1].number, 2u);
  EXPECT_NE(got.damage.find("at offset " + std::to_string(s.offsets[1] + format::kChunkHeaderSize)),
            std::string::npos)
      << got.damage;
}

// A chunk whose CRC matches but whose content is wrong (a writer's bug): the
// decoder's own checks name the place.
TEST(SnapshotDecoderTest, BadContentIsNamed) {
  Sink s = trace(1);
  const size_t payload = s.offsets[0] + format::kChunkHeaderSize;
  std::vector<uint8_t> body(s.bytes.begin() + static_cast<ptrdiff_t>(payload), s.bytes.end());
  body[0] = 11;  // no such part
  std::vector<uint8_t> file(s.bytes.begin(), s.bytes.begin() + static_cast<ptrdiff_t>(s.offsets[0]));
  format::append_chunk(file, format::ChunkType::Snapshot, body);
  const RawSnapshots got = decode_snapshots(file);
  EXPECT_TRUE(got.snapshots.empty());
  EXPECT_EQ(got.damage, "at offset " + std::to_string(payload + 1) + ": expected a snapshot part kind (0..10)");
}

TEST(SnapshotDecoderTest, CutShortIsNamed) {
  Sink s = trace(1, 200'000);
  s.bytes.resize(s.offsets[1]);  // the snapshot's first chunk only
  const RawSnapshots got = decode_snapshots(s.bytes);
  EXPECT_TRUE(got.snapshots.empty());
  EXPECT_NE(got.damage.find("has no end part: it was cut short"), std::string::npos) << got.damage;
}

// The finaliser's annex (names, stacks, sites, modules, threads) appended as
// finalising does, one chunk per payload.
struct Annex {
  std::vector<format::SnapshotName> names{{0x600000, 8, "g_list", "a.cc", 12}};
  std::vector<std::vector<uint64_t>> stacks{{0x401000, 0x402000}, {0x403000}};
  std::vector<uint32_t> stack_plus_one;
  std::vector<uint64_t> size;
  std::vector<uint8_t> build_id{0xab, 0xcd};
  std::vector<format::SnapshotModule> modules{{0x400000, 0x500000, 0, "/bin/p", build_id}};
  std::vector<format::SnapshotThread> threads{{0, 7, "main"}, {1, 8, "worker"}};

  explicit Annex(size_t blocks) {
    for (size_t b = 0; b < blocks; ++b) {
      stack_plus_one.push_back(b == 1 ? 0 : 1 + b % 2);  // block 1: no Alloc event
      size.push_back(b == 1 ? 0 : 20 + b);
    }
  }
  std::vector<size_t> append(std::vector<uint8_t>& file, uint32_t number) const {
    std::vector<size_t> offsets;
    const std::vector<std::span<const uint64_t>> stack_views(stacks.begin(), stacks.end());
    for (const auto& p : format::snapshot_annex_payloads(number, {names, stack_views, stack_plus_one, size, modules, threads})) {
      offsets.push_back(file.size());
      format::append_chunk(file, format::ChunkType::Snapshot, p);
    }
    return offsets;
  }
};

TEST(SnapshotDecoderTest, AnnexRoundTrip) {
  Sink s = trace(2);
  Annex(3).append(s.bytes, 0);
  const RawSnapshots got = decode_snapshots(s.bytes);
  EXPECT_EQ(got.damage, "");
  ASSERT_EQ(got.snapshots.size(), 2u);
  const RawSnapshot& a = got.snapshots[0];
  ASSERT_TRUE(a.annexed);
  ASSERT_EQ(a.names.size(), 1u);
  EXPECT_EQ(a.names[0].name, "g_list");
  EXPECT_EQ(a.names[0].line, 12u);
  EXPECT_EQ(a.stacks, (std::vector<std::vector<uint64_t>>{{0x401000, 0x402000}, {0x403000}}));
  ASSERT_EQ(a.sites.size(), 3u);
  EXPECT_EQ(a.sites[0].stack_plus_one, 1u);
  EXPECT_EQ(a.sites[0].size, 20u);
  EXPECT_EQ(a.sites[1].stack_plus_one, 0u);
  EXPECT_EQ(a.sites[2].stack_plus_one, 1u);
  EXPECT_EQ(a.sites[2].size, 22u);
  ASSERT_EQ(a.modules.size(), 1u);
  EXPECT_EQ(a.modules[0].path, "/bin/p");
  EXPECT_EQ(a.modules[0].end, 0x500000u);
  EXPECT_EQ(a.modules[0].build_id, (std::vector<uint8_t>{0xab, 0xcd}));
  ASSERT_EQ(a.thread_names.size(), 2u);
  EXPECT_EQ(a.thread_names[1].name, "worker");
  EXPECT_EQ(a.thread_names[1].os_tid, 8u);
  EXPECT_FALSE(got.snapshots[1].annexed);  // none written for it
  EXPECT_TRUE(got.snapshots[1].sites.empty());
}

// A big heap's annex spans chunks; losing one of them costs the annex (the
// events are read instead), not the snapshot, and says so.
TEST(SnapshotDecoderTest, AnnexOverManyChunksAndALostOne) {
  Sink s = trace(1, 400'000);
  Annex annex(400'000);
  for (size_t b = 0; b < 400'000; ++b) annex.size[b] += 1'000'000'000;  // 5-byte varints: > 1 MiB of sites
  const std::vector<size_t> chunks = annex.append(s.bytes, 0);
  ASSERT_GE(chunks.size(), 4u);  // names, then stacks and sites over at least three
  RawSnapshots got = decode_snapshots(s.bytes);
  EXPECT_EQ(got.damage, "");
  ASSERT_EQ(got.snapshots.size(), 1u);
  EXPECT_TRUE(got.snapshots[0].annexed);
  EXPECT_EQ(got.snapshots[0].sites.size(), 400'000u);
  EXPECT_EQ(got.snapshots[0].sites[399'999].size, 1'000'000'000u + 20 + 399'999);

  // Without a chunk of sites in the middle.
  std::vector<uint8_t> lost(s.bytes.begin(), s.bytes.begin() + static_cast<ptrdiff_t>(chunks[2]));
  lost.insert(lost.end(), s.bytes.begin() + static_cast<ptrdiff_t>(chunks[3]), s.bytes.end());
  got = decode_snapshots(lost);
  ASSERT_EQ(got.snapshots.size(), 1u);
  EXPECT_FALSE(got.snapshots[0].annexed);
  EXPECT_TRUE(got.snapshots[0].sites.empty());
  EXPECT_EQ(got.snapshots[0].blocks.size(), 400'000u);
  EXPECT_NE(got.damage.find("snapshot 0's annex (its blocks' sites; the events are read instead)"), std::string::npos)
      << got.damage;
  EXPECT_NE(got.damage.find("(a part is missing)"), std::string::npos) << got.damage;
}

// A damaged annex chunk (bad CRC) is stepped over and named; the snapshot stays.
TEST(SnapshotDecoderTest, DamagedAnnexChunkKeepsTheSnapshot) {
  Sink s = trace(1);
  const std::vector<size_t> chunks = Annex(3).append(s.bytes, 0);
  ASSERT_EQ(chunks.size(), 2u);  // names; the rest
  s.bytes[chunks[1] + format::kChunkHeaderSize + 3] ^= 0x40;
  const RawSnapshots got = decode_snapshots(s.bytes);
  ASSERT_EQ(got.snapshots.size(), 1u);
  EXPECT_FALSE(got.snapshots[0].annexed);
  EXPECT_EQ(got.snapshots[0].names.size(), 1u);  // its own chunk was intact
  EXPECT_NE(got.damage.find("a snapshot chunk is damaged: at offset " +
                            std::to_string(chunks[1] + format::kChunkHeaderSize)),
            std::string::npos)
      << got.damage;
}

// Finalising again appends a new annex: its Names part discards the old one,
// and the new one counts.
TEST(SnapshotDecoderTest, ANewNamesPartStartsANewAnnex) {
  Sink s = trace(1);
  Annex first(3);
  first.append(s.bytes, 0);
  std::vector<uint8_t> names_only = s.bytes;
  const std::vector<format::SnapshotName> other{{0x600008, 8, "g_other", "", 0}};
  format::append_chunk(names_only, format::ChunkType::Snapshot, format::snapshot_names_payload(0, other));
  RawSnapshots got = decode_snapshots(names_only);
  ASSERT_EQ(got.snapshots.size(), 1u);
  EXPECT_FALSE(got.snapshots[0].annexed);
  ASSERT_EQ(got.snapshots[0].names.size(), 1u);
  EXPECT_EQ(got.snapshots[0].names[0].name, "g_other");

  Annex second(3);
  second.threads.pop_back();
  second.append(s.bytes, 0);
  got = decode_snapshots(s.bytes);
  EXPECT_EQ(got.damage, "");
  ASSERT_EQ(got.snapshots.size(), 1u);
  EXPECT_TRUE(got.snapshots[0].annexed);
  EXPECT_EQ(got.snapshots[0].thread_names.size(), 1u);
}

}  // namespace
}  // namespace memloupe::reader
