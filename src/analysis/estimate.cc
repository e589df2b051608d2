#include "analysis/estimate.h"

#include <algorithm>
#include <cmath>

namespace memloupe::analysis {
namespace {

constexpr double kZ975 = 1.959963984540054;  // standard normal 97.5% quantile

// Regularised lower incomplete gamma P(a, x), a > 0: a power series below
// x = a + 1, a continued fraction (modified Lentz) above, where each converges fast.
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  const double log_prefix = -x + a * std::log(x) - std::lgamma(a);
  if (x < a + 1) {
    double term = 1 / a, sum = term;
    for (int n = 1; n < 100000; ++n) {
      term *= x / (a + n);
      sum += term;
      if (term < sum * 1e-16) break;
    }
    return std::min(1.0, sum * std::exp(log_prefix));
  }
  constexpr double kTiny = 1e-300;
  double b = x + 1 - a, c = 1 / kTiny, d = 1 / b, h = d;
  for (int i = 1; i < 100000; ++i) {
    const double an = -i * (i - a);
    b += 2;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1) < 1e-16) break;
  }
  return std::max(0.0, 1 - std::exp(log_prefix) * h);
}

// The p-quantile of Gamma(a, 1). Wilson–Hilferty is accurate to ~1e-6 relative
// for large a; below that, bisection on P (monotone in x) to full precision.
double gamma_quantile(double a, double p, double z) {
  if (a > 1e4) {
    const double t = 1 - 1 / (9 * a) + z / (3 * std::sqrt(a));
    return a * t * t * t;
  }
  double lo = 0, hi = a + 10 * std::sqrt(a) + 20;
  while (gamma_p(a, hi) < p) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; ++i) {
    const double mid = (lo + hi) / 2;
    (gamma_p(a, mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

}  // namespace

PoissonInterval poisson_interval_95(uint64_t k) {
  const double kd = static_cast<double>(k);
  // χ²(q; 2k)/2 is the q-quantile of Gamma(k, 1).
  const double lo = k == 0 ? 0 : gamma_quantile(kd, 0.025, -kZ975);
  const double hi = gamma_quantile(kd + 1, 0.975, kZ975);
  return {lo, hi};
}

Estimator::Estimator(format::Mode mode, uint64_t bytes_per_sample)
    : exact_(mode == format::Mode::All),
      bytes_per_sample_(exact_ || bytes_per_sample == 0 ? 1 : static_cast<double>(bytes_per_sample)) {}

void Estimator::weigh_block(Count& c, uint32_t bytes_per_sample) const {
  const uint64_t size = c.bytes;
  const uint64_t n_samples = c.samples;
  const double w = bytes_per_sample != 0 ? static_cast<double>(bytes_per_sample) : bytes_per_sample_;
  const double k = static_cast<double>(n_samples);
  c.weighted = w * k;
  c.weighted_sq = w * w * k;
  c.max_weight = n_samples != 0 ? w : 0;
  // p(s) = 1 − e^{−s/w}; a zero-byte block can only be in the trace if the
  // recorder sampled it anyway, so treat it as certain rather than divide by 0.
  const double p = size == 0 ? 1 : -std::expm1(-static_cast<double>(size) / w);
  c.objects = 1 / p;
  c.objects_var = (1 - p) / (p * p);
}

void Estimator::weigh_at_header_rate(Count& c) const {
  if (exact_) return;
  const double k = static_cast<double>(c.samples);
  c.weighted = bytes_per_sample_ * k;
  c.weighted_sq = bytes_per_sample_ * bytes_per_sample_ * k;
  c.max_weight = c.samples != 0 ? bytes_per_sample_ : 0;
}

Estimate Estimator::bytes(const Count& c) const {
  const double value = bytes_value(c);
  if (exact_) return {value, value, value};
  // One mean for every sample (always, unless the rate changed): Garwood's
  // interval on K, scaled. A set with no sample says nothing about which mean
  // its unseen bytes were sampled at: the header's is taken.
  const double w = c.max_weight > 0 ? c.max_weight : bytes_per_sample_;
  if (c.weighted == w * static_cast<double>(c.samples)) {
    const PoissonInterval i = poisson_interval_95(c.samples);
    return {value, i.lo * w, i.hi * w};
  }
  // Fay & Feuer's interval (see estimate.h): B̂ > 0 here, since some w_i < w_max.
  const double y = c.weighted, v = c.weighted_sq;
  const double lo = gamma_quantile(y * y / v, 0.025, -kZ975) * (v / y);
  const double a_hi = (y + w) * (y + w) / (v + w * w), scale_hi = (v + w * w) / (y + w);
  return {value, lo, gamma_quantile(a_hi, 0.975, kZ975) * scale_hi};
}

Estimate Estimator::objects(const Count& c) const {
  const double value = c.objects;
  if (exact_) return {value, value, value};
  if (c.blocks == 0) return {0, 0, 0, /*bounded=*/false};
  const double half = kZ975 * std::sqrt(std::max(0.0, c.objects_var));
  // At least the blocks actually seen exist.
  const double lo = std::max(static_cast<double>(c.blocks), value - half);
  // Σ(1/p − 1) = objects − blocks is how many unseen blocks the sampled ones
  // stand for. Below one, every sampled block was near-certain to be sampled
  // (large), and they say nothing about the small blocks that sampling misses
  // beside them: the Horvitz–Thompson variance is then ~0 and its interval
  // [blocks, blocks] excluded the truth on real programs (a peak of 4 sampled
  // large blocks among 3,722 live ones). No upper bound is known then.
  if (value - static_cast<double>(c.blocks) < 1) return {value, lo, value + half, /*bounded=*/false};
  return {value, lo, value + half};
}

}  // namespace memloupe::analysis
