// Tally: a sum of Mode::All blocks' Counts kept as integers.
#pragma once

#include <cstdint>

#include "analysis/estimate.h"

namespace memloupe::analysis {

// Mode::All blocks' Counts summed as integers: pass 2's freed blocks as it
// streams, for a query that keeps every freed block (the index's,
// AggregateBuilder::Impl::tallied), and the series' buckets (DenseSeries,
// FineSeries). Each such Count is {1 block, n_samples, size, 1.0 object}
// (Estimator::block), so a sum of them is its block count, samples and
// bytes, with the block count as its objects (a double, exact below 2^53 in
// any order): three integer adds per stack, thread and lifetime bucket per
// free instead of settle()'s Counts per metric, added to the metrics at
// finish() (the same bits: index_aggregate_test; docs/ANALYSIS.md).
struct Tally {
  uint64_t blocks = 0, samples = 0, bytes = 0;

  void add(uint64_t size, uint32_t n_samples) {
    ++blocks;
    samples += n_samples;
    bytes += size;
  }
  Tally& operator+=(const Tally& o) {
    blocks += o.blocks;
    samples += o.samples;
    bytes += o.bytes;
    return *this;
  }
  Count count() const {
    Count c;
    c.blocks = blocks;
    c.samples = samples;
    c.bytes = bytes;
    c.objects = static_cast<double>(blocks);
    return c;
  }
};

}  // namespace memloupe::analysis
