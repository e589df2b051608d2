#include "analysis/estimate.h"

#include <gtest/gtest.h>

#include <cmath>

namespace memloupe::analysis {
namespace {

// Garwood intervals as tabulated in the literature (e.g. Ulm 1990, Table 1).
TEST(PoissonInterval, MatchesTabulatedValues) {
  struct Row {
    uint64_t k;
    double lo, hi;
  };
  for (const Row& r : {Row{0, 0.0, 3.689}, Row{1, 0.0253, 5.572}, Row{2, 0.2422, 7.225},
                       Row{5, 1.624, 11.668}, Row{10, 4.795, 18.390}, Row{50, 37.111, 65.919}}) {
    const PoissonInterval i = poisson_interval_95(r.k);
    EXPECT_NEAR(i.lo, r.lo, 1e-3) << "k=" << r.k;
    EXPECT_NEAR(i.hi, r.hi, 1e-3) << "k=" << r.k;
  }
}

TEST(PoissonInterval, LargeCountsAgreeWithTheNormalLimitAndAreContinuous) {
  // Around the switch to Wilson–Hilferty (shape 1e4) the bounds must not jump.
  const PoissonInterval a = poisson_interval_95(9999);
  const PoissonInterval b = poisson_interval_95(10000);
  const PoissonInterval c = poisson_interval_95(10001);
  EXPECT_LT(a.lo, b.lo);
  EXPECT_LT(b.lo, c.lo);
  EXPECT_NEAR(b.lo - a.lo, 1.0, 0.01);
  EXPECT_NEAR(c.hi - b.hi, 1.0, 0.01);
  EXPECT_NEAR(b.lo, 10000 - 1.96 * 100, 2);
  EXPECT_NEAR(b.hi, 10000 + 1.96 * 100, 3);
  const PoissonInterval big = poisson_interval_95(1'000'000'000);
  EXPECT_NEAR(big.lo, 1e9 - 1.96 * std::sqrt(1e9), 5);
}

TEST(Estimator, ExactModeGivesTheValueAsItsInterval) {
  const Estimator e(format::Mode::All, 0);
  Count c = e.block(100, 1);
  c += e.block(28, 1);
  const Estimate bytes = e.bytes(c);
  EXPECT_EQ(bytes.value, 128);
  EXPECT_EQ(bytes.lo, 128);
  EXPECT_EQ(bytes.hi, 128);
  const Estimate objects = e.objects(c);
  EXPECT_EQ(objects.value, 2);
  EXPECT_EQ(objects.hi, 2);
}

// No sample: the bytes still have a Poisson upper bound, but nothing bounds how
// many (small) blocks went unseen, so the block count says it has no bound.
TEST(Estimator, BlockCountWithoutSamplesHasNoUpperBound) {
  const Estimator e(format::Mode::Sampled, 1000);
  const Count none;
  EXPECT_GT(e.bytes(none).hi, 0);
  EXPECT_TRUE(e.bytes(none).bounded);
  const Estimate objects = e.objects(none);
  EXPECT_EQ(objects.value, 0);
  EXPECT_FALSE(objects.bounded);
  // A large block was a near-certain sample: it says nothing of the small
  // blocks beside it either (SamplingCoverage.PeakOfFewLargeAmongManySmallBlocks).
  EXPECT_FALSE(e.objects(e.block(5000, 4)).bounded);
  // A small sampled block stands for ~10 like it: the interval is bounded.
  EXPECT_TRUE(e.objects(e.block(100, 1)).bounded);
  EXPECT_TRUE(Estimator(format::Mode::All, 0).objects(none).bounded);  // exact: 0 blocks
}

TEST(Estimator, SampledBytesScaleTheSampleCount) {
  const Estimator e(format::Mode::Sampled, 1000);
  Count c = e.block(5000, 4);  // a 5000-byte block that held 4 sample points
  const Estimate bytes = e.bytes(c);
  EXPECT_EQ(bytes.value, 4000);
  const PoissonInterval i = poisson_interval_95(4);
  EXPECT_DOUBLE_EQ(bytes.lo, i.lo * 1000);
  EXPECT_DOUBLE_EQ(bytes.hi, i.hi * 1000);
}

TEST(Estimator, SampledObjectsAreHorvitzThompson) {
  const Estimator e(format::Mode::Sampled, 1000);
  // p(1000) = 1 − e^{−1}: one sampled 1000-byte block stands for 1/p of them.
  const Count c = e.block(1000, 1);
  const double p = 1 - std::exp(-1.0);
  EXPECT_NEAR(c.objects, 1 / p, 1e-12);
  EXPECT_NEAR(c.objects_var, (1 - p) / (p * p), 1e-12);
  // A huge block is certainly sampled: it counts as one object, no uncertainty.
  const Count big = e.block(1'000'000, 1000);
  EXPECT_NEAR(big.objects, 1, 1e-12);
  const Estimate o = e.objects(big);
  EXPECT_NEAR(o.hi - o.lo, 0, 1e-6);
  EXPECT_GE(o.lo, 1);
}

}  // namespace
}  // namespace memloupe::analysis
