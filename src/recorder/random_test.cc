#include "recorder/random.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace memloupe::recorder {
namespace {

// Statistical checks use fixed seeds (so they are reproducible) and bounds at
// ~5-6 standard deviations: for a random seed, correct code would fail about
// once in a million runs.
constexpr double kSigmas = 5.5;

TEST(RngTest, SameSeedSameStream) {
  Rng a{42}, b{42}, c{43};
  for (int i = 0; i < 100; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    EXPECT_NE(x, c.next());
  }
}

TEST(RngTest, OpenUnitStaysInsideTheInterval) {
  Rng r{1};
  double lo = 1, hi = 0, sum = 0;
  constexpr int kN = 1'000'000;
  for (int i = 0; i < kN; ++i) {
    const double u = r.open_unit();
    lo = std::min(lo, u);
    hi = std::max(hi, u);
    sum += u;
  }
  EXPECT_GT(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  // Uniform: mean 1/2, sd of the mean sqrt(1/12 / N).
  EXPECT_NEAR(sum / kN, 0.5, kSigmas * std::sqrt(1.0 / 12 / kN));
}

TEST(ExponentialTest, MeanAndVariance) {
  Rng r{7};
  constexpr int kN = 400'000;
  constexpr double kMean = 4096;
  double sum = 0, sq = 0;
  for (int i = 0; i < kN; ++i) {
    const double x = exponential(r, kMean);
    ASSERT_GT(x, 0);
    sum += x;
    sq += x * x;
  }
  const double mean = sum / kN;
  EXPECT_NEAR(mean, kMean, kSigmas * kMean / std::sqrt(kN));
  // Var = mean^2; the fourth central moment of an exponential is 9 mean^4.
  const double var = sq / kN - mean * mean;
  EXPECT_NEAR(var, kMean * kMean, kSigmas * std::sqrt(8.0 / kN) * kMean * kMean);
}

double poisson_log_pmf(uint64_t k, double mu) {
  return -mu + static_cast<double>(k) * std::log(mu) - std::lgamma(static_cast<double>(k) + 1);
}

// Pearson chi-square of `n` draws against the exact pmf, over bins with an
// expected count of at least 20 (the tails merged into the end bins).
void expect_poisson_fits(double mu, uint64_t seed) {
  Rng r{seed};
  constexpr int kN = 200'000;
  const auto lo = static_cast<uint64_t>(std::max(0.0, mu - 8 * std::sqrt(mu) - 5));
  const auto hi = static_cast<uint64_t>(mu + 8 * std::sqrt(mu) + 10);
  std::vector<double> observed(hi - lo + 1, 0);
  for (int i = 0; i < kN; ++i) {
    const uint64_t k = poisson(r, mu);
    observed[std::clamp(k, lo, hi) - lo] += 1;
  }
  std::vector<double> expected(observed.size(), 0);
  double below = 1;
  for (uint64_t k = lo; k < hi; ++k) {
    expected[k - lo] = kN * std::exp(poisson_log_pmf(k, mu));
    below -= expected[k - lo] / kN;
  }
  // Everything below `lo` goes into the first bin, everything from `hi` on into the last.
  double under = 0;
  for (uint64_t k = 0; k < lo; ++k) under += std::exp(poisson_log_pmf(k, mu));
  expected[0] += kN * under;
  expected.back() = kN * std::max(0.0, below - under);
  // Merge bins until each expects >= 20.
  double chi2 = 0, acc_o = 0, acc_e = 0;
  int bins = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    acc_o += observed[i];
    acc_e += expected[i];
    if (acc_e >= 20 || i + 1 == expected.size()) {
      if (acc_e > 0) chi2 += (acc_o - acc_e) * (acc_o - acc_e) / acc_e, ++bins;
      acc_o = acc_e = 0;
    }
  }
  const double df = bins - 1;
  EXPECT_LT(chi2, df + 6 * std::sqrt(2 * df)) << "mu=" << mu << " bins=" << bins;
}

TEST(PoissonTest, MatchesThePmfBelowAndAboveTheAlgorithmSwitch) {
  expect_poisson_fits(0.05, 1);
  expect_poisson_fits(3, 2);
  expect_poisson_fits(9.99, 3);  // inversion
  expect_poisson_fits(10, 4);    // PTRS from here
  expect_poisson_fits(47.5, 5);
  expect_poisson_fits(1234.5, 6);
}

TEST(PoissonTest, HugeMeansAreCentredAndSpreadLikePoisson) {
  Rng r{9};
  constexpr int kN = 20'000;
  constexpr double kMu = 2'097'152;  // a 1 TiB block at a 512 KiB mean
  double sum = 0, sq = 0;
  for (int i = 0; i < kN; ++i) {
    const double k = static_cast<double>(poisson(r, kMu));
    sum += k;
    sq += k * k;
  }
  const double mean = sum / kN;
  EXPECT_NEAR(mean, kMu, kSigmas * std::sqrt(kMu / kN));
  EXPECT_NEAR(sq / kN - mean * mean, kMu, kSigmas * kMu * std::sqrt(2.0 / kN));
}

TEST(PoissonTest, EdgeMeans) {
  Rng r{3};
  EXPECT_EQ(poisson(r, 0), 0u);
  EXPECT_EQ(poisson(r, -1), 0u);
  EXPECT_EQ(poisson(r, 1e30), uint64_t{1} << 62);
}

}  // namespace
}  // namespace memloupe::recorder
