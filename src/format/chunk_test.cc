#include "format/chunk.h"

#include <gtest/gtest.h>

#include "format/crc32c.h"
#include "format/varint.h"

namespace memloupe::format {
namespace {

TEST(Chunk, HeaderRoundTrip) {
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5};
  std::vector<uint8_t> out;
  append_chunk(out, ChunkType::Events, payload);
  ASSERT_EQ(out.size(), kChunkHeaderSize + payload.size());
  EXPECT_EQ(get_u32(out.data()), 0x4b434c4du);
  EXPECT_EQ(std::string(out.begin(), out.begin() + 4), "MLCK");
  ChunkHeader h;
  ASSERT_EQ(parse_chunk_header(out.data(), h), ChunkHeaderStatus::Ok);
  EXPECT_EQ(h.type, static_cast<uint8_t>(ChunkType::Events));
  EXPECT_EQ(h.flags, 0);
  EXPECT_EQ(h.stored_len, 5u);
  EXPECT_EQ(h.raw_len, 5u);
  EXPECT_EQ(h.payload_crc, crc32c(payload.data(), payload.size()));
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), out.begin() + kChunkHeaderSize));
}

TEST(Chunk, EveryHeaderByteIsChecked) {
  std::vector<uint8_t> out;
  append_chunk(out, ChunkType::Symbols, std::vector<uint8_t>{9, 9});
  for (size_t i = 0; i < kChunkHeaderSize; ++i) {
    for (uint8_t x : {0x01, 0x10, 0xff}) {
      out[i] ^= x;
      ChunkHeader h;
      EXPECT_NE(parse_chunk_header(out.data(), h), ChunkHeaderStatus::Ok) << i;
      out[i] ^= x;
    }
  }
}

TEST(Chunk, RejectsImplausibleFields) {
  std::vector<uint8_t> payload(10);
  uint8_t hdr[kChunkHeaderSize];
  ChunkHeader h;
  write_chunk_header(hdr, ChunkType::Events, 0, payload, 11);  // raw != stored, not compressed
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields);
  write_chunk_header(hdr, ChunkType::Events, 0x02, payload, 10);  // unknown flag
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields);
  write_chunk_header(hdr, ChunkType::Events, kChunkZstd, payload, kMaxChunkRaw + 1);
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields);
  write_chunk_header(hdr, ChunkType::Events, kChunkZstd, payload, kMaxChunkRaw);
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::Ok);
  write_chunk_header(hdr, ChunkType::Events, kChunkZstd | 0x08, payload, 10);  // unknown flag
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields);
}

// A piece of the events' zstd stream is a compressed column chunk; only a
// piece starts a stream.
TEST(Chunk, StreamPiecesAreCompressedColumnChunks) {
  std::vector<uint8_t> payload(10);
  uint8_t hdr[kChunkHeaderSize];
  ChunkHeader h;
  const uint8_t piece = kChunkZstd | kChunkZstdStream;
  write_chunk_header(hdr, ChunkType::EventsColumns, piece, payload, 100);
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::Ok);
  write_chunk_header(hdr, ChunkType::EventsColumns, piece | kChunkStreamStart, payload, 100);
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::Ok);
  EXPECT_EQ(h.flags, piece | kChunkStreamStart);
  write_chunk_header(hdr, ChunkType::EventsColumns, kChunkZstdStream, payload, 10);  // not compressed
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields);
  write_chunk_header(hdr, ChunkType::EventsColumns, kChunkZstd | kChunkStreamStart, payload, 100);  // no piece
  EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields);
  for (ChunkType other : {ChunkType::Events, ChunkType::Snapshot, ChunkType::Symbols, ChunkType::AnalysisIndex}) {
    write_chunk_header(hdr, other, piece, payload, 100);
    EXPECT_EQ(parse_chunk_header(hdr, h), ChunkHeaderStatus::BadFields) << static_cast<int>(other);
  }
}

TEST(Chunk, Prologue) {
  uint8_t p[kPrologueSize];
  write_prologue(p);
  EXPECT_EQ(p[0], 0x8a);
  EXPECT_EQ(std::string(p + 1, p + 8), "MLTRACE");
  EXPECT_EQ(get_u32(p + 8), kFormatVersion);
  EXPECT_EQ(get_u32(p + 12), 0u);
}

}  // namespace
}  // namespace memloupe::format
