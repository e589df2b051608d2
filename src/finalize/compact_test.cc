#include "finalize/compact.h"

#include <gtest/gtest.h>

#include "reader/chunk_io.h"
#include "support/test_streams.h"

namespace memloupe::finalize {
namespace {

TEST(Compact, CompactedTraceReadsTheSame) {
  for (format::Mode mode : {format::Mode::Sampled, format::Mode::All}) {
    reader::testing::Stream s = reader::testing::make_stream(11, {.mode = mode, .events = 20000});
    auto c = compact_trace(s.bytes, {.zstd_level = 3, .max_events_payload = 100000});
    ASSERT_TRUE(c.ok()) << c.error().message;
    EXPECT_FALSE(c->damage);
    EXPECT_LT(c->bytes.size(), s.bytes.size());
    reader::ChunkList list = reader::scan_chunks(c->bytes);
    ASSERT_GE(list.chunks.size(), 3u);  // header + merged events chunks
    EXPECT_LT(list.chunks.size(), reader::scan_chunks(s.bytes).chunks.size());
    for (size_t i = 1; i < list.chunks.size(); ++i) {
      EXPECT_TRUE(list.chunks[i].flags & format::kChunkZstd);
      EXPECT_LE(list.chunks[i].raw_len, 100000u + 64 * 1024);
    }
    std::string error;
    EXPECT_EQ(reader::testing::read_all(c->bytes, &error), s.expected);
    EXPECT_EQ(error, "");
  }
}

TEST(Compact, KeepsWhatPrecedesDamage) {
  reader::testing::Stream s = reader::testing::make_stream(12, {.events = 3000, .flush_often = true});
  ASSERT_GE(s.chunk_ends.size(), 4u);
  const size_t cut = s.chunk_ends[2] + 30;  // inside the fourth events chunk
  std::vector<uint8_t> raw(s.bytes.begin(), s.bytes.begin() + static_cast<long>(cut));
  std::vector<std::string> before = reader::testing::read_all(raw);
  auto c = compact_trace(raw, {});
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c->damage);
  EXPECT_NE(c->damage->message.find("ends early"), std::string::npos) << c->damage->message;
  std::string error;
  EXPECT_EQ(reader::testing::read_all(c->bytes, &error), before);
  EXPECT_EQ(error, "");  // the compacted trace itself is whole
}

}  // namespace
}  // namespace memloupe::finalize
