#include "reader/chunk_io.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include "format/varint.h"
#include "reader/cursor.h"
#include "reader/reader.h"
#include "support/test_streams.h"

namespace memloupe::reader {
namespace {

using format::ChunkType;

TEST(ChunkIo, ScanListsEveryChunk) {
  testing::Stream s = testing::make_stream(9, {.events = 500, .flush_often = true});
  ChunkList list = scan_chunks(s.bytes);
  EXPECT_FALSE(list.error);
  ASSERT_EQ(list.chunks.size(), s.chunk_ends.size() + 1);  // + the header chunk
  EXPECT_EQ(list.chunks[0].type, static_cast<uint8_t>(ChunkType::Header));
  for (size_t i = 1; i < list.chunks.size(); ++i) {
    EXPECT_EQ(list.chunks[i].type, static_cast<uint8_t>(ChunkType::Events));
    EXPECT_EQ(list.chunks[i].offset + format::kChunkHeaderSize + list.chunks[i].stored.size(),
              s.chunk_ends[i - 1]);
  }
}

// The one walker: every header in order, and at a broken header either the end
// of the walk or, resyncing, the chunks after it.
TEST(ChunkIo, WalkStopsOrResyncsAtABrokenHeader) {
  testing::Stream s = testing::make_stream(9, {.events = 500, .flush_often = true});
  ASSERT_GE(s.chunk_ends.size(), 4u);
  auto offsets = [](std::span<const uint8_t> file, BrokenHeader broken, ChunkWalk* walk) {
    std::vector<uint64_t> seen;
    *walk = walk_chunks(file, format::kPrologueSize, file.size(), broken, [&](const ChunkHop& hop) {
      seen.push_back(hop.offset);
      return true;
    });
    return seen;
  };
  ChunkWalk walk;
  std::vector<uint64_t> all = offsets(s.bytes, BrokenHeader::Stop, &walk);
  EXPECT_TRUE(walk.complete);
  ASSERT_EQ(all.size(), s.chunk_ends.size() + 1);
  for (size_t i = 2; i < all.size(); ++i) EXPECT_EQ(all[i], s.chunk_ends[i - 2]);  // where the one before ends

  std::vector<uint8_t> damaged = s.bytes;
  damaged[s.chunk_ends[1] + 2] ^= 0xff;  // the third events chunk's magic
  std::vector<uint64_t> stopped = offsets(damaged, BrokenHeader::Stop, &walk);
  EXPECT_FALSE(walk.complete);
  EXPECT_EQ(walk.stopped_at, s.chunk_ends[1]);
  EXPECT_EQ(stopped, std::vector<uint64_t>(all.begin(), all.begin() + 3));
  std::vector<uint64_t> resynced = offsets(damaged, BrokenHeader::Resync, &walk);
  EXPECT_FALSE(walk.complete);
  std::vector<uint64_t> expected = all;
  expected.erase(expected.begin() + 3);
  EXPECT_EQ(resynced, expected);

  // A payload cut short is visited, last, and the walk is not complete.
  std::vector<uint8_t> cut(s.bytes.begin(), s.bytes.begin() + static_cast<long>(s.chunk_ends[2] - 1));
  bool last_cut_short = false;
  walk = walk_chunks(cut, format::kPrologueSize, cut.size(), BrokenHeader::Stop, [&](const ChunkHop& hop) {
    last_cut_short = hop.cut_short;
    return true;
  });
  EXPECT_TRUE(last_cut_short);
  EXPECT_FALSE(walk.complete);
  EXPECT_EQ(walk.stopped_at, s.chunk_ends[1]);
  EXPECT_TRUE(chunk_cut_short(cut, s.chunk_ends[1]));
  EXPECT_FALSE(chunk_cut_short(s.bytes, s.chunk_ends[1]));
}

TEST(ChunkIo, DecompressionIsBounded) {
  // A chunk whose zstd frame inflates to more than its declared raw length.
  std::vector<uint8_t> big(100000, 'x');
  std::vector<uint8_t> packed(ZSTD_compressBound(big.size()));
  packed.resize(ZSTD_compress(packed.data(), packed.size(), big.data(), big.size(), 1));
  std::vector<uint8_t> file(format::kPrologueSize);
  format::write_prologue(file.data());
  format::append_chunk(file, ChunkType::Events, format::kChunkZstd, packed, 1000);
  auto chunk = read_chunk(file, format::kPrologueSize);
  ASSERT_TRUE(chunk.ok()) << chunk.error().message;
  std::vector<uint8_t> buffer;
  auto payload = chunk_payload(*chunk, buffer);
  ASSERT_FALSE(payload.ok());
  EXPECT_EQ(payload.error().offset, format::kPrologueSize + format::kChunkHeaderSize);
  EXPECT_LE(buffer.size(), 1000u);
}

TEST(ChunkIo, NewerVersionIsRefused) {
  testing::Stream s = testing::make_stream(1, {.events = 5});
  format::put_u32(s.bytes.data() + 8, format::kFormatVersion + 1);
  std::string error;
  EXPECT_TRUE(testing::read_all(s.bytes, &error).empty());
  EXPECT_EQ(error, "trace format version 3 is newer than this memloupe (reads up to 2)");
}

TEST(ChunkIo, NotATrace) {
  std::string error;
  testing::read_all({'h', 'e', 'l', 'l', 'o'}, &error);
  EXPECT_NE(error.find("not a trace"), std::string::npos) << error;
  testing::read_all({}, &error);
  EXPECT_NE(error.find("empty"), std::string::npos) << error;
}

TEST(Cursor, VarintLimits) {
  const std::vector<uint8_t> max = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  Cursor c(max, 100, false);
  uint64_t v;
  ASSERT_TRUE(c.varint(v));
  EXPECT_EQ(v, ~uint64_t{0});
  const std::vector<uint8_t> overflow = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
  Cursor o(overflow, 0, false);
  EXPECT_FALSE(o.varint(v));
  const std::vector<uint8_t> endless(20, 0x80);
  Cursor e(endless, 0, false);
  EXPECT_FALSE(e.varint(v));
  const std::vector<uint8_t> cut = {0x80};
  Cursor t(cut, 0, false);
  EXPECT_FALSE(t.varint(v));
  EXPECT_EQ(t.expected("a varint").message, "at offset 0: expected a varint");
}

TEST(Cursor, StringsAndOffsets) {
  const std::vector<uint8_t> data = {3, 'a', 'b', 'c', 5, 'x'};
  Cursor c(data, 1000, false);
  std::string_view s;
  ASSERT_TRUE(c.string(s, 10));
  EXPECT_EQ(s, "abc");
  EXPECT_FALSE(c.string(s, 10));  // 5 bytes announced, 1 present
  EXPECT_EQ(c.pos(), 4u);         // a failed read consumes nothing
  EXPECT_EQ(c.expected("x").offset, 1004u);
  Cursor z(data, 77, true);
  EXPECT_EQ(z.expected("y").message,
            "at offset 77 (compressed chunk, byte 0 of its payload): expected y");
  const std::vector<uint8_t> long_str = {200, 1};
  Cursor l(long_str, 0, false);
  EXPECT_FALSE(l.string(s, 100));  // longer than allowed
}

}  // namespace
}  // namespace memloupe::reader
