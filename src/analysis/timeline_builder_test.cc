#include "analysis/timeline_builder.h"

#include <gtest/gtest.h>

#include <random>

namespace memloupe::analysis {
namespace {

TEST(TimelineBuilder, CarriesValuesAcrossEmptyBuckets) {
  TimelineBuilder b;
  b.change(0, 100, 100, 0);
  b.change(3, 40, 0, 60);
  const Timeline t = std::move(b).finish(5);
  ASSERT_EQ(t.bucket_ns, 1u);
  ASSERT_EQ(t.points.size(), 6u);
  EXPECT_EQ(t.points[0].live_end, 100);
  EXPECT_EQ(t.points[1].live_end, 100);  // carried over
  EXPECT_EQ(t.points[2].live_min, 100);
  EXPECT_EQ(t.points[3].live_end, 40);
  EXPECT_EQ(t.points[3].live_max, 40);  // the change happened as the bucket began
  EXPECT_EQ(t.points[3].freed, 60);
  EXPECT_EQ(t.points[5].live_end, 40);
}

TEST(TimelineBuilder, ABucketIncludesTheValueItWasEnteredWith) {
  TimelineBuilder b;
  b.change(0, 100, 100, 0);
  b.change(5, 100, 100, 0);  // widens nothing: buckets of 1 ns
  for (uint64_t t = 6; t < 5000; ++t) b.change(t, 100, 0, 0);
  b.change(5001, 30, 0, 70);  // in a 4 ns bucket [5000, 5004), after it began
  const Timeline t = std::move(b).finish(5001);
  ASSERT_EQ(t.bucket_ns, 4u);
  const HeapPoint& p = t.points[5000 / 4];
  EXPECT_EQ(p.live_max, 100);
  EXPECT_EQ(p.live_min, 30);
  EXPECT_EQ(p.live_end, 30);
}

TEST(TimelineBuilder, StaysBoundedAndKeepsExtremes) {
  TimelineBuilder b;
  double live = 0;
  double total_alloc = 0;
  double ref_max = 0;
  uint64_t ref_max_t = 0;
  // A sawtooth over 10^6 ns with one spike at t = 777777.
  for (uint64_t t = 0; t < 1'000'000; t += 10) {
    const double delta = t == 777'770 ? 5000 : (t / 10) % 2 == 0 ? 10 : -10;
    live += delta;
    if (delta > 0) total_alloc += delta;
    if (live > ref_max) {
      ref_max = live;
      ref_max_t = t;
    }
    b.change(t, live, delta > 0 ? delta : 0, delta < 0 ? -delta : 0);
  }
  const Timeline t = std::move(b).finish(1'000'000);
  EXPECT_LE(t.points.size(), kMaxTimelinePoints);
  EXPECT_GE(t.points.size(), kMaxTimelinePoints / 2);
  EXPECT_GE(t.bucket_ns * t.points.size(), 1'000'000u);
  double max = 0, alloc = 0;
  for (const HeapPoint& p : t.points) {
    max = std::max(max, p.live_max);
    alloc += p.allocated;
  }
  EXPECT_EQ(max, ref_max);
  EXPECT_EQ(alloc, total_alloc);
  EXPECT_EQ(t.points[ref_max_t / t.bucket_ns].live_max, ref_max);
}

// A Mode::All heap counted in integers gives the doubles' series, bit for bit:
// changes in and across buckets, jumps over empty ones, merges (halve()).
TEST(TimelineBuilder, ExactInIntegersGivesTheDoublesSeries) {
  TimelineBuilder doubles;
  ExactTimelineBuilder integers;
  std::mt19937_64 rng(13);
  uint64_t live = 0;
  uint64_t t = 0;
  for (int i = 0; i < 200'000; ++i) {
    t += rng() % 4 == 0 ? rng() % 5000 : rng() % 3;
    const uint64_t size = rng() % 100'000;
    const bool free = live >= size && rng() % 2 == 0;
    live = free ? live - size : live + size;
    doubles.change(t, static_cast<double>(live), free ? 0 : static_cast<double>(size),
                   free ? static_cast<double>(size) : 0);
    integers.change(t, live, free ? 0 : size, free ? size : 0);
  }
  const Timeline d = std::move(doubles).finish(t + 7);
  const Timeline n = std::move(integers).finish(t + 7);
  ASSERT_GT(d.bucket_ns, 1u);  // merged
  ASSERT_EQ(n.bucket_ns, d.bucket_ns);
  ASSERT_EQ(n.points.size(), d.points.size());
  for (size_t i = 0; i < d.points.size(); ++i) {
    EXPECT_EQ(n.points[i].live_end, d.points[i].live_end) << i;
    EXPECT_EQ(n.points[i].live_max, d.points[i].live_max) << i;
    EXPECT_EQ(n.points[i].live_min, d.points[i].live_min) << i;
    EXPECT_EQ(n.points[i].allocated, d.points[i].allocated) << i;
    EXPECT_EQ(n.points[i].freed, d.points[i].freed) << i;
  }
}

TEST(RssBuilder, BoundedAndKeepsThePeak) {
  RssBuilder b;
  for (uint64_t i = 0; i < 100'000; ++i) b.add(format::RssSample{i, i == 4321 ? 1'000'000 : i % 100});
  const auto samples = std::move(b).finish();
  EXPECT_LE(samples.size(), kMaxTimelinePoints);
  bool found = false;
  for (const auto& s : samples) found |= s.rss_bytes == 1'000'000 && s.time_ns == 4321;
  EXPECT_TRUE(found);
  for (size_t i = 1; i < samples.size(); ++i) EXPECT_LT(samples[i - 1].time_ns, samples[i].time_ns);
}

TEST(RssBuilder, KeepsTheLastSampleSoTheCurveReachesTheEnd) {
  // A high early sample in the last merged group used to stand for it alone:
  // the curve stopped before the run's end.
  for (uint64_t n : {10ull, 2048ull, 2049ull, 5001ull, 100'000ull}) {
    RssBuilder b;
    for (uint64_t i = 0; i < n; ++i) b.add(format::RssSample{i, i + 1 == n ? 1 : 1'000'000 - i});
    const auto samples = std::move(b).finish();
    ASSERT_FALSE(samples.empty());
    EXPECT_LE(samples.size(), kMaxTimelinePoints) << n;
    EXPECT_EQ(samples.back().time_ns, n - 1) << n;
    EXPECT_EQ(samples.back().rss_bytes, 1u) << n;
    for (size_t i = 1; i < samples.size(); ++i) EXPECT_LT(samples[i - 1].time_ns, samples[i].time_ns) << n;
  }
}

}  // namespace
}  // namespace memloupe::analysis
