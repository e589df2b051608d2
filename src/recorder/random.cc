#include "recorder/random.h"

#include <cmath>

namespace memloupe::recorder {
namespace {

constexpr double kMaxCount = 0x1.0p62;

// Sequential search: walk the CDF from 0 until it passes one uniform draw.
// Expected steps: mu + 1, so only for small means.
uint64_t poisson_inversion(Rng& rng, double mu) noexcept {
  const double u = rng.open_unit();
  double p = std::exp(-mu);
  double cdf = p;
  uint64_t k = 0;
  // The CDF reaches 1 - 1e-16 after ~mu + 40 steps for mu < 10; rounding could
  // leave it a hair below u, hence the bound.
  while (u > cdf && k < 200) {
    ++k;
    p *= mu / static_cast<double>(k);
    cdf += p;
  }
  return k;
}

// PTRS: W. Hörmann, "The transformed rejection method for generating Poisson
// random variables", Insurance: Mathematics and Economics 12 (1993). A candidate k
// comes from a cheap hat transform of one uniform; most candidates pass the
// squeeze test, the rest are accepted against the exact log-pmf. Valid for mu >= 10.
uint64_t poisson_ptrs(Rng& rng, double mu) noexcept {
  const double slam = std::sqrt(mu);
  const double loglam = std::log(mu);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double v_r = 0.9277 - 3.6224 / (b - 2);
  for (;;) {
    const double u = rng.open_unit() - 0.5;
    const double v = rng.open_unit();
    const double us = 0.5 - std::fabs(u);
    const double k = std::floor((2 * a / us + b) * u + mu + 0.43);
    if (us >= 0.07 && v <= v_r) return static_cast<uint64_t>(k);
    if (k < 0 || (us < 0.013 && v > us)) continue;
    int sign;  // lgamma_r: lgamma() writes the global signgam, not thread-safe
    const double log_k_factorial = lgamma_r(k + 1, &sign);
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -mu + k * loglam - log_k_factorial)
      return static_cast<uint64_t>(k);
  }
}

}  // namespace

double exponential(Rng& rng, double mean) noexcept { return -std::log(rng.open_unit()) * mean; }

uint64_t poisson(Rng& rng, double mu) noexcept {
  if (!(mu > 0)) return 0;
  if (mu >= kMaxCount) return static_cast<uint64_t>(kMaxCount);
  const uint64_t k = mu < 10 ? poisson_inversion(rng, mu) : poisson_ptrs(rng, mu);
  return k < static_cast<uint64_t>(kMaxCount) ? k : static_cast<uint64_t>(kMaxCount);
}

}  // namespace memloupe::recorder
