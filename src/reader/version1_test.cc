// Version-1 traces (backtrace hash folded innermost first, docs/FORMAT.md §5.5)
// still read. tests/data/v1 holds traces that the version-1 encoder wrote for
// two seeded test streams; the generator's own record of the events it asked
// for is the expected result, and today's encoder, which writes version 2, must
// give the same events from different bytes (the cache places backtraces
// elsewhere, so the slot words differ).
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "finalize/compact.h"
#include "format/varint.h"
#include "format/wire.h"
#include "support/test_streams.h"

namespace memloupe::reader {
namespace {

using format::Mode;
using testing::StreamOptions;

std::vector<uint8_t> read_file(const std::string& name) {
  std::ifstream in(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/data/v1/" + name, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void expect_reads_as_stream(const std::string& name, uint64_t seed, const StreamOptions& o) {
  const std::vector<uint8_t> v1 = read_file(name);
  ASSERT_GT(v1.size(), format::kPrologueSize) << name;
  ASSERT_EQ(format::get_u32(v1.data() + 8), 1u) << name;
  const testing::Stream now = testing::make_stream(seed, o);
  ASSERT_EQ(format::get_u32(now.bytes.data() + 8), format::kFormatVersion);
  EXPECT_NE(now.bytes, v1);  // else the test would not tell the two hashes apart

  std::string error;
  EXPECT_EQ(testing::read_all(v1, &error), now.expected) << name;
  EXPECT_EQ(error, "") << name;
  EXPECT_EQ(testing::read_all(now.bytes, &error), now.expected);
  EXPECT_EQ(error, "");

  // The finaliser keeps the prologue, so a compacted version-1 trace is still
  // read by version 1's rules.
  auto compacted = finalize::compact_trace(v1, {.zstd_level = 1, .max_events_payload = 20000});
  ASSERT_TRUE(compacted.ok()) << compacted.error().message;
  EXPECT_EQ(format::get_u32(compacted->bytes.data() + 8), 1u);
  EXPECT_EQ(testing::read_all(compacted->bytes, &error), now.expected) << name;
  EXPECT_EQ(error, "");
}

// (The options are those tests/data/v1/README.md names for each file.)
TEST(Version1, AllModeColumnsTraceReads) {
  expect_reads_as_stream("all_columns_seed11.trace", 11,
                         {.mode = Mode::All, .addresses = false, .events = 3000, .max_depth = 200, .columns = true});
}

TEST(Version1, SampledTraceReads) {
  expect_reads_as_stream("sampled_seed12.trace", 12, {.mode = Mode::Sampled, .events = 1500, .max_depth = 120});
}

}  // namespace
}  // namespace memloupe::reader
