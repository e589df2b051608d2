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


// memloupe_set_rate: each block weighs by the mean it was sampled at.
TEST(Estimator, BlocksSampledAtAChangedRateWeighByTheirOwnMean) {
  const Estimator e(format::Mode::Sampled, 1000);
  Count c = e.block(5000, 4);           // at the header's mean: 4 x 1000
  c += e.block(300, 3, 100);            // after a change to 100: 3 x 100
  EXPECT_EQ(e.bytes_value(c), 4300);
  EXPECT_EQ(c.max_weight, 1000);
  // p(s) at the block's own mean: 300 bytes at 100 is a near-certain sample.
  EXPECT_NEAR(e.block(300, 3, 100).objects, 1 / (1 - std::exp(-3.0)), 1e-12);
  // Fay & Feuer's interval brackets the value (its coverage:
  // SamplingCoverage.RateChangedMidRun).
  const Estimate mixed = e.bytes(c);
  EXPECT_LT(mixed.lo, 4300);
  EXPECT_GT(mixed.hi, 4300);
  // One block removed again: the sums return exactly.
  c -= e.block(300, 3, 100);
  EXPECT_EQ(e.bytes_value(c), 4000);
  EXPECT_EQ(c.weighted_sq, 4'000'000);
}

// Every sample at one (changed) mean: Garwood's interval at that mean, exactly
// as when the header says it.
TEST(Estimator, OneChangedMeanGivesGarwoodAtThatMean) {
  const Estimator header(format::Mode::Sampled, 1000), changed(format::Mode::Sampled, 77);
  Count c = header.block(500, 2, 250);
  c += header.block(900, 3, 250);
  const Estimate b = header.bytes(c);
  const PoissonInterval i = poisson_interval_95(5);
  EXPECT_EQ(b.value, 1250);
  EXPECT_DOUBLE_EQ(b.lo, i.lo * 250);
  EXPECT_DOUBLE_EQ(b.hi, i.hi * 250);
  // Fay & Feuer reduces to Garwood when the weights are equal: the formula at
  // weights 250 and 250.0000001 is continuous with it.
  Count near = c;
  near.weighted_sq += 1e-3;
  const Estimate ff = header.bytes(Count{near.blocks, near.samples, near.bytes, near.objects, near.objects_var,
                                         near.weighted + 1e-9, near.weighted_sq, near.max_weight});
  EXPECT_NEAR(ff.lo, b.lo, 1e-3 * b.lo);
  EXPECT_NEAR(ff.hi, b.hi, 1e-3 * b.hi);
  // An index Count (samples only) gets the header's weights.
  Count stored;
  stored.samples = 6;
  changed.weigh_at_header_rate(stored);
  EXPECT_EQ(changed.bytes_value(stored), 6 * 77);
  EXPECT_DOUBLE_EQ(changed.bytes(stored).hi, poisson_interval_95(6).hi * 77);
}

}  // namespace
}  // namespace memloupe::analysis
