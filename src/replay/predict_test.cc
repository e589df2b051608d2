#include "replay/predict.h"

#include <gtest/gtest.h>

namespace memloupe::replay {
namespace {

constexpr double kMiB = 1024 * 1024;

Measurements replayed(double baseline_mib, double peak_mib) {
  Measurements m;
  m.baseline_rss_bytes = baseline_mib * kMiB;
  m.peak_rss_bytes = peak_mib * kMiB;
  return m;
}

TEST(Predict, TheRecorderShareGrowsWithItsOutputRingAndAddressTable) {
  TraceFacts small, large;
  small.max_live_blocks = 100;        // the initial 4096-slot table, 64 KiB
  small.alloc_calls = 1000;           // 2000 events: 8400 bytes of the output ring
  small.free_calls = 1000;
  large.max_live_blocks = 1'000'000;  // 2^21 slots: 32 MiB, 48 MiB while it grew
  large.alloc_calls = 10'000'000;     // the whole 4 MiB ring
  EXPECT_EQ(recorder_rss_estimate(small), static_cast<uint64_t>(1.75 * kMiB + 8400 + 64 * 1024));
  EXPECT_EQ(recorder_rss_estimate(large), static_cast<uint64_t>(1.75 * kMiB + 4 * kMiB + 48 * kMiB));
}

// sqlite3's figures from docs/REPLAY.md: the recorded peak less the recorder's
// share, moved by each allocator's replayed peak over glibc's baseline.
TEST(Predict, MovesTheRecordedPeakByTheReplaysDifference) {
  TraceFacts f;
  f.max_live_blocks = 23201;  // 65536 slots: 1 MiB, 1.5 while it grew
  f.alloc_calls = 1'723'578;  // the whole output ring
  f.free_calls = 865'502;
  f.recorded_peak_rss_bytes = static_cast<uint64_t>(50.0 * kMiB);
  const Measurements glibc = replayed(2.5, 41.5);
  const Measurements other = replayed(3.5, 52.5);  // its own baseline is not subtracted
  const auto g = predict_peak_rss(f, glibc, glibc);
  const auto o = predict_peak_rss(f, glibc, other);
  ASSERT_TRUE(g && o);
  EXPECT_DOUBLE_EQ(*g, (50.0 - 5.75 - 1.5) * kMiB);
  EXPECT_DOUBLE_EQ(*o, (50.0 - 5.75 - 1.5 + 11.0) * kMiB);
}

TEST(Predict, NoFigureWithoutAnRssSampleOrBelowTheRecordersShare) {
  TraceFacts f;
  EXPECT_FALSE(predict_peak_rss(f, replayed(2, 3), replayed(2, 3)));
  f.alloc_calls = 10'000'000;
  f.recorded_peak_rss_bytes = static_cast<uint64_t>(4 * kMiB);  // less than the recorder alone
  EXPECT_FALSE(predict_peak_rss(f, replayed(2, 3), replayed(2, 3)));
}

}  // namespace
}  // namespace memloupe::replay
