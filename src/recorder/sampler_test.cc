#include "recorder/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace memloupe::recorder {
namespace {

// Fixed seeds; bounds at 5.5 standard deviations (a correct sampler fails such a
// check for about one random seed in 10^7).
constexpr double kSigmas = 5.5;

// Drives the hooks' logic: the fast path is `countdown -= size; if > 0 done`.
struct Stream {
  Rng rng;
  double mean;
  Gap gap;
  Stream(uint64_t seed, double m) : rng{seed}, mean(m), gap(next_gap(rng, m)) {}
  uint32_t allocate(uint64_t size) {
    const Step s = sample_block(rng, mean, gap, size);
    gap = s.after;
    return s.n_samples;
  }
};

TEST(SamplerTest, GapsAreCeilingsOfExponentials) {
  Rng r{11};
  constexpr int kN = 200'000;
  constexpr double kMean = 1000;
  double sum = 0;
  for (int i = 0; i < kN; ++i) {
    const Gap g = next_gap(r, kMean);
    ASSERT_GE(g.countdown, 1);
    ASSERT_GE(g.offset, 0.0f);
    ASSERT_LT(g.offset, 1.0f);
    sum += static_cast<double>(g.countdown) - g.offset;
  }
  EXPECT_NEAR(sum / kN, kMean, kSigmas * kMean / std::sqrt(kN));
}

TEST(SamplerTest, SameSeedSameSamples) {
  Stream a(5, 4096), b(5, 4096);
  for (uint64_t i = 0; i < 10'000; ++i) ASSERT_EQ(a.allocate(i % 777), b.allocate(i % 777));
}

// Σ n_samples over a stream of B bytes is Poisson(B / mean): the estimate
// mean · Σ n is unbiased with standard deviation sqrt(B · mean).
void expect_unbiased(uint64_t seed, double mean, uint64_t block, uint64_t blocks) {
  Stream s(seed, mean);
  uint64_t samples = 0;
  for (uint64_t i = 0; i < blocks; ++i) samples += s.allocate(block);
  const double expected = static_cast<double>(block * blocks) / mean;
  EXPECT_NEAR(static_cast<double>(samples), expected, kSigmas * std::sqrt(expected))
      << "block=" << block << " mean=" << mean;
}

TEST(SamplerTest, SmallBlocksAreUnbiased) { expect_unbiased(1, 4096, 24, 4'000'000); }
TEST(SamplerTest, BlocksNearTheMeanAreUnbiased) { expect_unbiased(2, 4096, 4096, 100'000); }
TEST(SamplerTest, BlocksSpanningManySamplePointsAreUnbiased) {
  expect_unbiased(3, 4096, 1 << 20, 2'000);  // ~256 points per block
}
TEST(SamplerTest, ZeroByteBlocksAreNeverSampled) {
  Stream s(4, 16);
  for (int i = 0; i < 100'000; ++i) ASSERT_EQ(s.allocate(0), 0u);
}

TEST(SamplerTest, HugeBlockCountIsOnePoissonDraw) {
  // 1 TiB at a 512 KiB mean: 2^21 expected points, without looping per point.
  Stream s(6, 512 * 1024);
  const double n = s.allocate(uint64_t{1} << 40);
  EXPECT_NEAR(n, 2097152.0, kSigmas * std::sqrt(2097152.0));
}

TEST(SamplerTest, InclusionProbabilityIsOneMinusExpMinusSizeOverMean) {
  // Memorylessness: whatever came before, a block of n bytes is sampled with
  // probability 1 - exp(-n/mean). Interleave unrelated sizes to make sure.
  Stream s(8, 1000);
  constexpr int kN = 200'000;
  int hits = 0;
  for (int i = 0; i < kN; ++i) {
    s.allocate(static_cast<uint64_t>(i % 13) * 97);
    hits += s.allocate(1000) > 0;
  }
  const double p = 1 - std::exp(-1.0);
  EXPECT_NEAR(static_cast<double>(hits) / kN, p, kSigmas * std::sqrt(p * (1 - p) / kN));
}

TEST(SamplerTest, SitesSharingAStreamAreEachUnbiased) {
  // Two "sites" interleaved in one thread's stream, very different sizes.
  Stream s(9, 64 * 1024);
  uint64_t small_samples = 0, big_samples = 0;
  constexpr uint64_t kSmall = 48, kBig = 300'000;
  constexpr int kRounds = 200'000;
  for (int i = 0; i < kRounds; ++i) {
    small_samples += s.allocate(kSmall);
    if (i % 50 == 0) big_samples += s.allocate(kBig);
  }
  const double small_expected = double{kSmall} * kRounds / (64 * 1024);
  const double big_expected = double{kBig} * (kRounds / 50) / (64 * 1024);
  EXPECT_NEAR(static_cast<double>(small_samples), small_expected, kSigmas * std::sqrt(small_expected));
  EXPECT_NEAR(static_cast<double>(big_samples), big_expected, kSigmas * std::sqrt(big_expected));
}

TEST(SamplerTest, BlockJustReachingThePointHoldsIt) {
  Rng r{1};
  // The point lies 0.25 bytes before the end of a 100-byte countdown.
  const Step hit = sample_block(r, 1e12, {100, 0.25f}, 100);
  EXPECT_EQ(hit.n_samples, 1u);
  const Step miss = sample_block(r, 1e12, {101, 0.25f}, 100);
  EXPECT_EQ(miss.n_samples, 0u);
  EXPECT_EQ(miss.after.countdown, 1);
  EXPECT_EQ(miss.after.offset, 0.25f);
}

}  // namespace
}  // namespace memloupe::recorder
