// Traces of older format versions still read (docs/FORMAT.md). tests/data/v1
// holds traces that the version-1 encoder wrote (backtrace hash folded
// innermost first, §5.5), tests/data/v3 one that the version-3 encoder wrote
// (block references from one landmark in a 4096-allocation window, §5.6),
// tests/data/v4 one that the version-4 encoder wrote (column chunks without
// lanes, §5.8), for
// seeded test streams; the generator's own record of the events it asked for
// is the expected result, and today's encoder must give the same events from
// different bytes.
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

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/data/" + path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// `path`: under tests/data, a trace of format `version` written for `seed`, `o`.
void expect_reads_as_stream(const std::string& path, uint32_t version, uint64_t seed, const StreamOptions& o) {
  const std::vector<uint8_t> old = read_file(path);
  ASSERT_GT(old.size(), format::kPrologueSize) << path;
  ASSERT_EQ(format::get_u32(old.data() + 8), version) << path;
  const testing::Stream now = testing::make_stream(seed, o);
  ASSERT_EQ(format::get_u32(now.bytes.data() + 8), format::kFormatVersion);
  EXPECT_NE(now.bytes, old);  // else the test would not tell the two versions apart

  std::string error;
  EXPECT_EQ(testing::read_all(old, &error), now.expected) << path;
  EXPECT_EQ(error, "") << path;
  EXPECT_EQ(testing::read_all(now.bytes, &error), now.expected);
  EXPECT_EQ(error, "");

  // The finaliser keeps the prologue, so a compacted old trace is still read
  // by its version's rules.
  auto compacted = finalize::compact_trace(old, {.zstd_level = 1, .max_events_payload = 20000});
  ASSERT_TRUE(compacted.ok()) << compacted.error().message;
  EXPECT_EQ(format::get_u32(compacted->bytes.data() + 8), version);
  EXPECT_EQ(testing::read_all(compacted->bytes, &error), now.expected) << path;
  EXPECT_EQ(error, "");
}

// (The options are those tests/data/v*/README.md name for each file.)
TEST(Version1, AllModeColumnsTraceReads) {
  expect_reads_as_stream("v1/all_columns_seed11.trace", 1, 11,
                         {.mode = Mode::All, .addresses = false, .events = 3000, .max_depth = 200, .columns = true});
}

TEST(Version1, SampledTraceReads) {
  expect_reads_as_stream("v1/sampled_seed12.trace", 1, 12, {.mode = Mode::Sampled, .events = 1500, .max_depth = 120});
}

TEST(Version3, AllModeAddressesTraceReads) {
  expect_reads_as_stream("v3/all_addresses_seed13.trace", 3, 13,
                         {.mode = Mode::All, .addresses = true, .events = 12000, .max_depth = 6, .rare_events = false,
                          .columns = true});
}

// Eight threads (escaped ids among them), ThreadSwitches between them in
// one stream per column, Ext events of every kind.
TEST(Version4, AllModeColumnsTraceReads) {
  expect_reads_as_stream("v4/all_columns_seed14.trace", 4, 14,
                         {.mode = Mode::All, .addresses = false, .events = 3000, .max_depth = 8, .columns = true});
}

}  // namespace
}  // namespace memloupe::reader
