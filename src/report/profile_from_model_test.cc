#include "report/profile_from_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "analysis/index.h"
#include "report/export_massif.h"
#include "support/test_script.h"

namespace memloupe::report {
namespace {

// The series' width is a power of two (analysis::series_width), so a trace
// that ends just past one leaves about half the buckets past its end: the
// profile keeps the ones that cover the duration, so the HTML report's and
// the massif export's time axis ends there, not at an empty second half.
TEST(ProfileFromModel, TheSeriesBucketsEndAtTheDuration) {
  analysis::testing::Script s;
  const uint64_t end = analysis::kIndexSeriesBuckets * (uint64_t{1} << 20) + 5;  // buckets of 2^21 ns: 51
  for (uint64_t i = 0; i < 300; ++i) {
    const format::AllocId a = s.alloc(i * (end / 300), 100 + i, {0x10 + i % 4});
    if (i % 3 != 0) s.free(a, i * (end / 300) + 700);
  }
  s.alloc(end - 1, 8, {0x10});
  s.end(end);
  analysis::QueryArgs args;
  args.series_buckets = analysis::kIndexSeriesBuckets;
  const Profile p = profile_from_model(s.run(args));
  ASSERT_EQ(p.duration_ns, end);
  EXPECT_EQ(p.bucket_ns, uint64_t{1} << 21);
  EXPECT_EQ(p.bucket_count, 51u);
  EXPECT_LE(uint64_t{p.bucket_count - 1} * p.bucket_ns, end);
  EXPECT_GT(uint64_t{p.bucket_count} * p.bucket_ns, end);
  uint32_t last = 0;
  for (const Site& site : p.sites)
    for (const Bucket& b : site.buckets) {
      EXPECT_LT(b.index, p.bucket_count);
      last = std::max(last, b.index);
    }
  EXPECT_EQ(last, p.bucket_count - 1);  // (the last block is in the last bucket)
  // Massif's snapshots: the start, the peak's, and one at the end of each
  // bucket that covers the trace, the last at its end (104 ms), not 49 more
  // clamped there.
  std::ostringstream massif;
  write_massif(p, massif);
  const std::string text = massif.str();
  size_t snapshots = 0;
  for (size_t at = text.find("\ntime="); at != std::string::npos; at = text.find("\ntime=", at + 1)) ++snapshots;
  EXPECT_EQ(snapshots, 2 + p.bucket_count) << text;
  EXPECT_EQ(text.substr(text.rfind("\ntime=")).substr(0, 10), "\ntime=104\n");
}

}  // namespace
}  // namespace memloupe::report
