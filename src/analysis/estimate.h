// Counting sampled blocks, and turning counts into estimates with 95% intervals.
//
// The recorder samples each allocated byte independently with probability
// λ = 1/bytes_per_sample (a Poisson process on the byte line; see docs/ANALYSIS.md).
// For any set S of allocations chosen without looking at the sampling (a site,
// "live at t", "leaked", ...), with B bytes and N blocks in total:
//   - the number of sample points K = Σ n_samples over S's sampled blocks is
//     Poisson(λ·B), so B̂ = K/λ is unbiased and its exact (Garwood) 95% interval
//     comes from the chi-squared quantiles of K;
//   - a block of size s is sampled with probability p(s) = 1 − e^{−λ·s}, so
//     N̂ = Σ 1/p(s) over sampled blocks (Horvitz–Thompson) is unbiased, with
//     variance estimated by Σ (1 − p)/p², and a normal-approximation interval.
// In Mode::All every block is seen: p = 1, and B̂ = Σ size, N̂ = blocks exactly.
//
// The rate may change while the program runs (memloupe_set_rate, a RateChange in
// the trace): each block is then weighed by the mean w_i in force when it was
// sampled (format::Alloc::bytes_per_sample). K_i ~ Poisson(bytes_i / w_i), so
// B̂ = Σ w_i·K_i is still unbiased, with variance estimated by V = Σ w_i²·K_i; its
// 95% interval is Fay & Feuer's (1997) gamma interval for a weighted sum of
// Poisson counts: [G⁻¹(0.025; B̂²/V, V/B̂), G⁻¹(0.975; (B̂+w_max)²/(V+w_max²),
// (V+w_max²)/(B̂+w_max))], which is Garwood's exactly when every w_i is the same
// (and that case is computed as before). p(s) uses each block's own mean.
//
// Count holds only sums, so counts of disjoint sets add (site totals, tree
// totals, time buckets) and the estimate of the union is computed from the sum.
#pragma once

#include <algorithm>
#include <cstdint>

#include "format/events.h"

namespace memloupe::analysis {

struct Count {
  uint64_t blocks = 0;     // blocks seen (sampled blocks in Mode::Sampled)
  uint64_t samples = 0;    // Σ n_samples (K)
  uint64_t bytes = 0;      // Σ size of the blocks seen (exact total in Mode::All)
  double objects = 0;      // Σ 1/p(size)   (== blocks in Mode::All)
  double objects_var = 0;  // Σ (1 − p)/p²  (== 0 in Mode::All)
  // Mode::Sampled, each block weighed by its mean w (see above):
  double weighted = 0;     // Σ w·n_samples: the byte estimate B̂
  double weighted_sq = 0;  // Σ w²·n_samples: its variance estimate V
  double max_weight = 0;   // the largest w of a block with samples ever added

  bool empty() const { return blocks == 0; }
  Count& operator+=(const Count& o) {
    blocks += o.blocks;
    samples += o.samples;
    bytes += o.bytes;
    objects += o.objects;
    objects_var += o.objects_var;
    weighted += o.weighted;
    weighted_sq += o.weighted_sq;
    max_weight = std::max(max_weight, o.max_weight);
    return *this;
  }
  // Only for removing a block (or set) that was added before. max_weight stays
  // (a wider interval than needed, never a narrower one). The weighted sums are
  // sums of integers (w and n_samples are), so they return exactly to 0.
  Count& operator-=(const Count& o) {
    blocks -= o.blocks;
    samples -= o.samples;
    bytes -= o.bytes;
    objects -= o.objects;
    objects_var -= o.objects_var;
    weighted -= o.weighted;
    weighted_sq -= o.weighted_sq;
    return *this;
  }
};

// `into` += a block's Count `c` (Estimator::block), or a sum of them.
// `exact`: the trace is Mode::All, whose blocks' Counts have no weights or
// variance, so only the fields a block changes are added (the others hold
// +0.0, which adding +0.0 leaves as they are: the same bits as operator+=).
inline void add_block(Count& into, const Count& c, bool exact) {
  if (!exact) {
    into += c;
    return;
  }
  into.blocks += c.blocks;
  into.samples += c.samples;
  into.bytes += c.bytes;
  into.objects += c.objects;
}

// `from` -= such a Count, added before (the same bits as operator-=).
inline void remove_block(Count& from, const Count& c, bool exact) {
  if (!exact) {
    from -= c;
    return;
  }
  from.blocks -= c.blocks;
  from.samples -= c.samples;
  from.bytes -= c.bytes;
  from.objects -= c.objects;
}

// add_block() and remove_block() of a Mode::All block's Count (Estimator::block:
// 1 block, n_samples, size, 1 object) from its fields, without making the
// 64-byte Count, and without its object: a sum of such Counts has as many
// objects as blocks (whole numbers below 2^53: exact as doubles), so the
// caller sets them, objects_of_blocks(), where the sum is read (a double
// loaded, added and stored per Count).
inline void add_exact_block(Count& into, uint64_t size, uint32_t n_samples) {
  into.blocks += 1;
  into.samples += n_samples;
  into.bytes += size;
}
inline void remove_exact_block(Count& from, uint64_t size, uint32_t n_samples) {
  from.blocks -= 1;
  from.samples -= n_samples;
  from.bytes -= size;
}
// A sum of Mode::All Counts (add_block() or add_exact_block()) with its objects.
inline Count objects_of_blocks(Count c) {
  c.objects = static_cast<double>(c.blocks);
  return c;
}

// A point estimate with its 95% interval; lo == value == hi when exact.
struct Estimate {
  double value = 0;
  double lo = 0;
  double hi = 0;
  // False when the data put no upper bound on the value: a block count from a
  // sampled set with no sample at all, or whose sampled blocks were all large
  // enough to be near-certain samples (Estimator::objects): its unseen blocks
  // could be any number of tiny ones; `hi` then holds the Horvitz–Thompson bound of 0, which views must
  // not print as a bound.
  bool bounded = true;
};

class Estimator {
 public:
  Estimator() = default;  // exact (Mode::All)
  Estimator(format::Mode mode, uint64_t bytes_per_sample);
  explicit Estimator(const format::TraceInfo& info)
      : Estimator(info.mode, info.bytes_per_sample) {}

  bool exact() const { return exact_; }
  double bytes_per_sample() const { return bytes_per_sample_; }

  // The Count of one block as the trace recorded it; `bytes_per_sample` is the
  // mean it was sampled at (format::Alloc::bytes_per_sample; 0: the header's).
  // (Inline for Mode::All: the index's builders take one per Alloc and Free.)
  Count block(uint64_t size, uint32_t n_samples, uint32_t bytes_per_sample = 0) const {
    Count c;
    c.blocks = 1;
    c.samples = n_samples;
    c.bytes = size;
    if (exact_) {
      c.objects = 1;
    } else {
      weigh_block(c, bytes_per_sample);
    }
    return c;
  }
  // A Count of `samples` points at the header's mean, all else set: fills the
  // weighted sums of a Count stored without them (the analysis index, which is
  // only written for traces whose rate never changed).
  void weigh_at_header_rate(Count& c) const;

  // Point estimates only (cheap; for sorting and charts).
  double bytes_value(const Count& c) const { return exact_ ? static_cast<double>(c.bytes) : c.weighted; }
  double objects_value(const Count& c) const { return c.objects; }

  Estimate bytes(const Count& c) const;
  Estimate objects(const Count& c) const;

 private:
  // block()'s estimates of a sampled block, from its size and samples in `c`.
  void weigh_block(Count& c, uint32_t bytes_per_sample) const;

  bool exact_ = true;
  double bytes_per_sample_ = 1;
};

// Exact 95% confidence interval for the mean μ of a Poisson variable observed
// as k (Garwood 1936): [χ²(0.025; 2k)/2, χ²(0.975; 2k+2)/2]; lo = 0 when k = 0.
struct PoissonInterval {
  double lo = 0;
  double hi = 0;
};
PoissonInterval poisson_interval_95(uint64_t k);

}  // namespace memloupe::analysis
