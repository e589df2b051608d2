#include "reader/chunk_io.h"

#include <gtest/gtest.h>
#include <zstd.h>

#include <thread>

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

// Pieces of one zstd stream as the recorder writes them (each ended by a
// flush), the stream started again at a fourth.
struct StreamPieces {
  std::vector<uint8_t> file;  // chunks only
  std::vector<std::vector<uint8_t>> raw;
};
StreamPieces stream_pieces() {
  StreamPieces s;
  ZSTD_CCtx* z = ZSTD_createCCtx();
  for (int i = 0; i < 4; ++i) {
    std::vector<uint8_t> raw(20000);  // the same bytes each time but the first: the second piece is a sliver
    uint32_t x = 12345;
    for (uint8_t& b : raw) b = static_cast<uint8_t>((x = x * 1103515245u + 12345u) >> 26);
    raw[0] = static_cast<uint8_t>(i);
    const bool start = i == 0 || i == 3;
    if (start) ZSTD_CCtx_reset(z, ZSTD_reset_session_only);
    std::vector<uint8_t> packed(ZSTD_compressBound(raw.size()));
    ZSTD_outBuffer out{packed.data(), packed.size(), 0};
    ZSTD_inBuffer in{raw.data(), raw.size(), 0};
    while (ZSTD_compressStream2(z, &out, &in, ZSTD_e_flush) != 0) {
    }
    packed.resize(out.pos);
    const uint8_t flags = format::kChunkZstd | format::kChunkZstdStream | (start ? format::kChunkStreamStart : 0);
    format::append_chunk(s.file, ChunkType::EventsColumns, flags, packed, static_cast<uint32_t>(raw.size()));
    s.raw.push_back(std::move(raw));
  }
  ZSTD_freeCCtx(z);
  return s;
}
std::vector<ChunkView> views(std::span<const uint8_t> file) {
  std::vector<ChunkView> out;
  for (uint64_t at = 0; at < file.size();) {
    auto c = read_chunk(file, at);
    EXPECT_TRUE(c) << c.error().message;
    if (!c) break;
    out.push_back(*c);
    at += format::kChunkHeaderSize + c->stored.size();
  }
  return out;
}

TEST(ChunkIo, StreamPiecesInflateInOrder) {
  const StreamPieces s = stream_pieces();
  const std::vector<ChunkView> chunks = views(s.file);
  ASSERT_EQ(chunks.size(), 4u);
  // Matched against the piece before: the second is a sliver of the first.
  EXPECT_LT(chunks[1].stored.size() * 4, chunks[0].stored.size());
  ChunkInflater inflater;
  std::vector<uint8_t> buffer;
  for (size_t i = 0; i < chunks.size(); ++i) {
    auto payload = inflater.payload(chunks[i], buffer);
    ASSERT_TRUE(payload) << i << ": " << payload.error().message;
    EXPECT_TRUE(std::ranges::equal(*payload, s.raw[i])) << i;
  }
  // A piece alone is refused by chunk_payload, and by an inflater that did not
  // see its stream start; the start of a stream inflates alone.
  auto alone = chunk_payload(chunks[1], buffer);
  ASSERT_FALSE(alone);
  EXPECT_NE(alone.error().message.find("piece of the events' zstd stream"), std::string::npos);
  ChunkInflater late;
  auto cont = late.payload(chunks[1], buffer);
  ASSERT_FALSE(cont);
  EXPECT_EQ(cont.error().offset, chunks[1].offset);
  EXPECT_NE(cont.error().message.find("expected the start of the events' zstd stream"), std::string::npos);
  auto restart = late.payload(chunks[3], buffer);
  ASSERT_TRUE(restart) << restart.error().message;
  EXPECT_TRUE(std::ranges::equal(*restart, s.raw[3]));
}

// A piece that does not inflate (a wrong raw length here; bytes that are not
// zstd's likewise) names its offset, and the pieces after it are refused until
// the stream starts again.
TEST(ChunkIo, ADamagedPieceStopsItsStream) {
  StreamPieces s = stream_pieces();
  std::vector<ChunkView> chunks = views(s.file);
  ASSERT_EQ(chunks.size(), 4u);
  ChunkInflater inflater;
  std::vector<uint8_t> buffer;
  ASSERT_TRUE(inflater.payload(chunks[0], buffer));
  ChunkView shorter = chunks[1];
  shorter.raw_len -= 1;
  auto bad = inflater.payload(shorter, buffer);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().offset, chunks[1].offset + format::kChunkHeaderSize);
  EXPECT_NE(bad.error().message.find("expected a zstd stream piece of 19999 bytes"), std::string::npos)
      << bad.error().message;
  EXPECT_FALSE(inflater.payload(chunks[2], buffer));
  auto restart = inflater.payload(chunks[3], buffer);
  ASSERT_TRUE(restart) << restart.error().message;
  EXPECT_TRUE(std::ranges::equal(*restart, s.raw[3]));
  ChunkView garbage = chunks[0];
  std::vector<uint8_t> junk(garbage.stored.size(), 0x5a);
  garbage.stored = junk;
  ChunkInflater fresh;
  auto g = fresh.payload(garbage, buffer);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("expected a piece of a zstd stream"), std::string::npos) << g.error().message;
}

// append_chunk_compressed keeps a compression context per thread for the next
// chunk: its bytes must stay those of a fresh ZSTD_compress whatever was
// compressed before on that thread (other sizes, other levels).
TEST(ChunkIo, AReusedContextCompressesAsAFreshOne) {
  auto payload = [](size_t n, uint32_t seed) {
    std::vector<uint8_t> p(n);
    uint32_t x = seed;
    for (size_t i = 0; i < n; ++i) {
      x = x * 1664525u + 1013904223u;
      p[i] = static_cast<uint8_t>(i % 97 < 60 ? i % 13 : x >> 24);  // some repeats, some noise
    }
    return p;
  };
  const std::vector<std::vector<uint8_t>> payloads = {payload(3 << 20, 1), payload(5000, 2), payload(700000, 3),
                                                      payload(3 << 20, 4), payload(100, 5)};
  const int levels[] = {6, 3, 6, 1, 6, 19, 6};
  auto expected = [&](size_t i, int level) {
    const std::vector<uint8_t>& p = payloads[i % payloads.size()];
    std::vector<uint8_t> packed(ZSTD_compressBound(p.size()));
    packed.resize(ZSTD_compress(packed.data(), packed.size(), p.data(), p.size(), level));
    std::vector<uint8_t> out;
    if (packed.size() >= p.size()) {
      format::append_chunk(out, ChunkType::Symbols, p);
    } else {
      format::append_chunk(out, ChunkType::Symbols, format::kChunkZstd, packed, static_cast<uint32_t>(p.size()));
    }
    return out;
  };
  auto run = [&](size_t from) {
    for (size_t k = 0; k < std::size(levels); ++k) {
      const size_t i = from + k;
      std::vector<uint8_t> out;
      append_chunk_compressed(out, ChunkType::Symbols, payloads[i % payloads.size()], levels[k]);
      EXPECT_EQ(out, expected(i, levels[k])) << "payload " << i % payloads.size() << " at level " << levels[k];
    }
  };
  std::thread other(run, 2);  // a context of its own, beside this thread's
  run(0);
  other.join();
  run(1);
}

TEST(ChunkIo, NewerVersionIsRefused) {
  testing::Stream s = testing::make_stream(1, {.events = 5});
  format::put_u32(s.bytes.data() + 8, format::kFormatVersion + 1);
  std::string error;
  EXPECT_TRUE(testing::read_all(s.bytes, &error).empty());
  EXPECT_EQ(error, "trace format version " + std::to_string(format::kFormatVersion + 1) +
                       " is newer than this memloupe (reads up to " + std::to_string(format::kFormatVersion) + ")");
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

// Every length of varint reads back what put_varint wrote, the two-byte ones
// (read without the loop) at their bounds, and one cut after its first byte
// or with a third byte to come is not read and consumes nothing.
TEST(Cursor, VarintsOfEveryLength) {
  std::vector<uint64_t> values = {0, 1, 127, 128, 129, 255, 256, 16383, 16384, 16385, ~uint64_t{0}};
  for (unsigned bits = 7; bits < 64; bits += 7) values.insert(values.end(), {(uint64_t{1} << bits) - 1, uint64_t{1} << bits});
  for (uint64_t value : values) {
    uint8_t buf[format::kMaxVarint + 1];
    const auto n = static_cast<size_t>(format::put_varint(buf, value) - buf);
    buf[n] = 0x7f;  // a next field, not to be read
    Cursor c(std::span<const uint8_t>(buf, n + 1), 0, false);
    uint64_t v = 0;
    ASSERT_TRUE(c.varint(v)) << value;
    EXPECT_EQ(v, value);
    EXPECT_EQ(c.pos(), n) << value;
    if (n < 2) continue;
    Cursor cut(std::span<const uint8_t>(buf, n - 1), 0, false);
    EXPECT_FALSE(cut.varint(v)) << value;
    EXPECT_EQ(cut.pos(), 0u);
  }
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
