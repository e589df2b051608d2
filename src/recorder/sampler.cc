#include "recorder/sampler.h"

#include <cmath>

namespace memloupe::recorder {

Gap next_gap(Rng& rng, double mean) noexcept {
  const double g = exponential(rng, mean);  // > 0: open_unit() < 1
  const double up = std::ceil(g);
  return {static_cast<int64_t>(up), static_cast<float>(up - g)};
}

uint32_t samples_in_block(Rng& rng, double mean, Gap before, uint64_t size) noexcept {
  // The pending point sits at `first` bytes into the block, 0 < first <= size.
  const double first = static_cast<double>(before.countdown) - before.offset;
  const double rest = static_cast<double>(size) - first;
  const uint64_t more = rest > 0 ? poisson(rng, rest / mean) : 0;
  return more >= UINT32_MAX - 1 ? UINT32_MAX : static_cast<uint32_t>(1 + more);
}

Step sample_block(Rng& rng, double mean, Gap before, uint64_t size) noexcept {
  if (before.countdown > 0 && static_cast<uint64_t>(before.countdown) > size)
    return {0, {before.countdown - static_cast<int64_t>(size), before.offset}};
  const uint32_t n = samples_in_block(rng, mean, before, size);
  return {n, next_gap(rng, mean)};
}

}  // namespace memloupe::recorder
