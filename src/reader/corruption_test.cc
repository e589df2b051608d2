// Damage every byte of a small trace, and cut it at every length: the reader
// must deliver exactly the original events up to the damage, then stop with a
// precise error — never crash, never invent events.
#include <gtest/gtest.h>

#include "finalize/compact.h"
#include "format/chunk.h"
#include "format/symbols_encoder.h"
#include "reader/chunk_io.h"
#include "reader/cursor.h"
#include "reader/reader.h"
#include "support/test_streams.h"

namespace memloupe::reader {
namespace {

using testing::event_text;

struct Trace {
  std::vector<uint8_t> bytes;
  std::vector<std::string> expected;
  std::vector<size_t> chunk_ends;  // offsets where a chunk ends (clean cut points), header first
};

// level -1: row form as recorded before; -2: as the recorder writes now (column
// chunks, no addresses); -3: rows without addresses; 0: finalised, column form
// uncompressed; > 0: zstd.
Trace small_trace(format::Mode mode, int level) {
  testing::Stream s = testing::make_stream(
      3, {.mode = mode, .addresses = level > -2, .events = 40, .max_depth = 12, .flush_often = true,
          .columns = level == -2});
  Trace t{std::move(s.bytes), std::move(s.expected), {}};
  format::SymbolsEncoder symbols;
  const format::SymbolFrame frames[] = {{"inlined", "a.h", 3, 1}, {"main", "main.cc", 10, 5}};
  symbols.add(0x1000, frames);
  symbols.add(0x1010, std::span(frames).first(1));
  std::vector<uint8_t> sym_chunks;
  symbols.finish(sym_chunks);
  if (level >= 0) t.bytes = finalize::compact_trace(t.bytes, {.zstd_level = level})->bytes;
  t.bytes.insert(t.bytes.end(), sym_chunks.begin(), sym_chunks.end());
  t.chunk_ends.clear();
  for (const ChunkView& v : scan_chunks(t.bytes).chunks)
    t.chunk_ends.push_back(v.offset + format::kChunkHeaderSize + v.stored.size());
  t.expected.push_back(event_text(format::SymbolDef{0x1000, frames}));
  t.expected.push_back(event_text(format::SymbolDef{0x1010, std::span(frames).first(1)}));
  return t;
}

// `got` must be a prefix of `want`; if it is shorter, `error` must explain.
void expect_prefix_or_error(const std::vector<std::string>& got, const std::string& error,
                            const std::vector<std::string>& want, const std::string& what) {
  ASSERT_LE(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << what << " event " << i;
  if (got.size() < want.size()) {
    EXPECT_NE(error, "") << what << ": stopped silently";
  }
}

class Corruption : public ::testing::TestWithParam<std::pair<format::Mode, int>> {};

TEST_P(Corruption, EverySingleByteFlip) {
  const Trace t = small_trace(GetParam().first, GetParam().second);
  ASSERT_EQ(testing::read_all(t.bytes), t.expected);
  for (size_t i = 0; i < t.bytes.size(); ++i) {
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      std::vector<uint8_t> bad = t.bytes;
      bad[i] ^= x;
      std::string error;
      const std::vector<std::string> got = testing::read_all(bad, &error);
      const std::string what = "byte " + std::to_string(i) + " ^ " + std::to_string(x);
      expect_prefix_or_error(got, error, t.expected, what);
      if (!error.empty() && i >= 16) {
        EXPECT_NE(error.find("offset"), std::string::npos) << what << ": " << error;
      }
    }
  }
}

TEST_P(Corruption, EveryTruncationPoint) {
  const Trace t = small_trace(GetParam().first, GetParam().second);
  const size_t header_end = t.chunk_ends.front();
  for (size_t n = 0; n < t.bytes.size(); ++n) {
    std::vector<uint8_t> cut(t.bytes.begin(), t.bytes.begin() + static_cast<long>(n));
    std::string error;
    const std::vector<std::string> got = testing::read_all(cut, &error);
    const std::string what = "cut at " + std::to_string(n);
    const bool clean = std::find(t.chunk_ends.begin(), t.chunk_ends.end(), n) != t.chunk_ends.end();
    // A cut between chunks looks like a trace that simply ended there.
    expect_prefix_or_error(got, clean ? "(clean cut)" : error, t.expected, what);
    if (n > header_end && !clean) {
      EXPECT_EQ(error.rfind("trace ends early at offset ", 0), 0u) << what << ": " << error;
      EXPECT_NE(error.find(" after " + std::to_string(got.size()) + " events"), std::string::npos)
          << what << ": " << error;
    }
    if (clean && n >= header_end) {
      EXPECT_EQ(error, "") << what;
    }
  }
}

// Version 5's order stream (docs/FORMAT.md §5.8), edited in a valid trace: a
// run naming a lane the chunk does not have, or an entry cut short, is damage
// at its byte, and the events of the runs before it are delivered.
struct OrderStream {
  testing::Stream t;
  size_t chunk = 0;       // the events chunk's offset
  size_t at = 0;          // its order stream's first byte, in the file
  size_t end = 0;         // and the byte after it
  unsigned lanes = 0;
  uint64_t first_run = 0;  // events in the first run
  size_t second = 0;       // the second entry's first byte, in the file

  OrderStream() {
    // Six threads at most (ids below 32): lane 7 is one the chunk has not.
    t = testing::make_stream(5, {.mode = format::Mode::All, .addresses = false, .events = 400,
                                 .rare_events = false, .huge_thread_ids = false, .columns = true});
    for (const ChunkView& c : scan_chunks(t.bytes).chunks) {
      if (c.type != static_cast<uint8_t>(format::ChunkType::EventsColumns)) continue;
      chunk = c.offset;
      Cursor p(c.stored, c.offset + format::kChunkHeaderSize, false);
      uint64_t v = 0, order_len = 0;
      uint8_t b = 0;
      EXPECT_TRUE(p.u64(v) && p.u64(v) && p.u8(b) && p.u8(b) && p.varint(order_len));
      lanes = b;
      for (unsigned i = 0; i < 4 * lanes + 4; ++i) EXPECT_TRUE(p.varint(v));
      at = chunk + format::kChunkHeaderSize + p.pos();
      end = at + order_len;
      EXPECT_TRUE(p.varint(v));
      first_run = (v >> format::kLaneBits) + 1;
      second = chunk + format::kChunkHeaderSize + p.pos();
      break;
    }
  }
  // The chunk's CRCs after an edit.
  void reseal() {
    auto c = read_chunk(t.bytes, chunk);
    ASSERT_FALSE(c.ok());  // the edit broke the payload CRC
    const uint32_t len = format::get_u32(t.bytes.data() + chunk + 8);
    uint8_t* h = t.bytes.data() + chunk;
    format::write_chunk_header(h, format::ChunkType::EventsColumns, 0, {h + format::kChunkHeaderSize, len}, len);
  }
};

TEST(LaneOrder, ALaneTheChunkHasNotIsDamage) {
  OrderStream o;
  ASSERT_NE(o.chunk, 0u);
  ASSERT_LT(o.lanes, 7u);
  ASSERT_LT(o.second, o.end);
  o.t.bytes[o.second] |= 7;  // the lane is the low bits of the varint's first byte
  o.reseal();
  std::string error;
  const std::vector<std::string> got = testing::read_all(o.t.bytes, &error);
  EXPECT_EQ(error, "at offset " + std::to_string(o.second) + ": expected a lane below the chunk's " +
                       std::to_string(o.lanes) + ", found 7");
  ASSERT_EQ(got.size(), o.first_run);
  EXPECT_TRUE(std::equal(got.begin(), got.end(), o.t.expected.begin()));
}

TEST(LaneOrder, AnEntryCutShortIsDamage) {
  OrderStream o;
  ASSERT_NE(o.chunk, 0u);
  o.t.bytes[o.end - 1] |= 0x80;  // the last entry runs past the stream's end
  o.reseal();
  std::string error;
  const std::vector<std::string> got = testing::read_all(o.t.bytes, &error);
  EXPECT_NE(error.find(": expected an order stream entry (varint)"), std::string::npos) << error;
  EXPECT_LT(got.size(), o.t.expected.size());
  EXPECT_TRUE(std::equal(got.begin(), got.end(), o.t.expected.begin()));
}

INSTANTIATE_TEST_SUITE_P(Modes, Corruption,
                         ::testing::Values(std::pair{format::Mode::Sampled, -1},
                                           std::pair{format::Mode::All, -1},
                                           std::pair{format::Mode::All, -2},
                                           std::pair{format::Mode::All, -3},
                                           std::pair{format::Mode::Sampled, -2},
                                           std::pair{format::Mode::Sampled, 0},
                                           std::pair{format::Mode::All, 0},
                                           std::pair{format::Mode::All, 3}));

}  // namespace
}  // namespace memloupe::reader
