// An --all trace without per-event addresses (the recorder's default) analyses
// exactly as the same events with addresses: one seeded event stream encoded
// both ways, row form and finalised column form, each read and analysed from
// its file. The models are compared as the bytes of their analysis index
// (every count, peak, leak, site and series, f64 bits included).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "analysis/index.h"
#include "analysis/model.h"
#include "finalize/compact.h"
#include "reader/chunk_io.h"
#include "support/test_streams.h"

namespace memloupe::analysis {
namespace {

namespace fs = std::filesystem;

// The analysis of `bytes`, as its index bytes; also its overview for checks.
std::vector<uint8_t> analysed(const std::vector<uint8_t>& bytes, const std::string& name, Overview& overview) {
  const fs::path path = fs::temp_directory_path() / ("memloupe_address_free_" + std::to_string(::getpid()) + name);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  QueryArgs args;
  args.series_buckets = kIndexSeriesBuckets;
  Expected<Model> model = analyze_file(path.string(), args, {}, UseIndex::Never);
  fs::remove(path);
  if (!model) {
    ADD_FAILURE() << model.error().message;
    return {};
  }
  EXPECT_FALSE(model->overview.error) << name;
  overview = model->overview;
  Index index;
  index.overview = model->overview;
  index.aggregate = std::move(model->aggregate);
  return encode_index(index);
}

TEST(AddressFree, AnalysisEqualsTheSameEventsWithAddresses) {
  for (uint64_t seed : {1, 2, 3}) {
    // Thread ids below 32: AggregateBuilder sizes a table by the largest id.
    reader::testing::StreamOptions o{.mode = format::Mode::All, .events = 20000, .huge_thread_ids = false};
    const reader::testing::Stream with = reader::testing::make_stream(seed, o);
    o.addresses = false;
    const reader::testing::Stream without = reader::testing::make_stream(seed, o);
    ASSERT_LT(without.bytes.size(), with.bytes.size());

    Overview a, b, c;
    const std::vector<uint8_t> want = analysed(with.bytes, "with", a);
    ASSERT_FALSE(want.empty());
    EXPECT_EQ(analysed(without.bytes, "without", b), want) << "seed " << seed;
    auto compacted = finalize::compact_trace(without.bytes, {.zstd_level = 1});
    ASSERT_TRUE(compacted.ok()) << compacted.error().message;
    EXPECT_EQ(analysed(compacted->bytes, "columns", c), want) << "seed " << seed;

    // Not vacuous: the stream allocates, frees, leaks and has a peak.
    EXPECT_GT(a.alloc_events, 5000u);
    EXPECT_GT(a.free_events, 5000u);
    EXPECT_GT(a.leaked.blocks, 0u);
    EXPECT_EQ(b.alloc_events, a.alloc_events);
    EXPECT_EQ(b.peak.time_ns, a.peak.time_ns);
    EXPECT_EQ(b.leaked.blocks, a.leaked.blocks);
  }
}

}  // namespace
}  // namespace memloupe::analysis
