// FineSeries: a Mode::All trace's freed blocks summed per stack into time
// buckets of a power-of-two width while the events stream, so that the
// series' final buckets (whose width needs the run's duration) are made at the
// end from these sums and not from the log of every freed block.
//
// The fine width is 2^shift() ns, the smallest power of two that keeps every
// time seen below kCells widths (two neighbours are merged when the times
// grow past that: at most kCells cells per stack). At the end each fine
// bucket lies wholly inside one final bucket, whose sums it adds to, unless a
// final bucket's boundary falls inside it (it "straddles": at most one per
// boundary, ~100 of kCells): those blocks are replayed from the series log
// (AggregateBuilder::Impl::replay_fine). Whole numbers (Tally), so any
// grouping gives pass 2's sums.
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/tally.h"

namespace memloupe::analysis {

class FineSeries {
 public:
  // Fine buckets per stack at most: ~10 per final bucket of the index's 100,
  // so ~10-20% of the freed blocks are replayed at the end (those in fine
  // buckets that straddle), for at most 56 bytes x kCells per stack (the
  // suite's (b): ~700 stacks).
  static constexpr uint32_t kCells = 1024;

  struct Cell {
    uint32_t index = 0;  // the fine bucket: [index << shift, (index + 1) << shift)
    Tally allocated, freed;
  };

  void add_stack() { rows_.emplace_back(); }
  unsigned shift() const { return shift_; }

  // A block of `stack` allocated at `alloc_ns` and freed at `free_ns` (times
  // never earlier than the last free's, as pass 2 settles blocks). True when
  // its two times lie in different fine buckets (at the width then).
  bool add(uint32_t stack, uint64_t alloc_ns, uint64_t free_ns, uint64_t size, uint32_t n_samples) {
    if ((free_ns >> shift_) >= kCells) [[unlikely]] coarsen(free_ns);
    const auto free_index = static_cast<uint32_t>(free_ns >> shift_);
    const auto alloc_index = static_cast<uint32_t>(alloc_ns >> shift_);
    std::vector<Cell>& row = rows_[stack];
    cell(row, free_index).freed.add(size, n_samples);
    cell(row, alloc_index).allocated.add(size, n_samples);
    return alloc_index != free_index;
  }

  const std::vector<Cell>& row(uint32_t stack) const { return rows_[stack]; }
  void clear() { rows_ = {}; }

 private:
  // The row's cell of `index`, added if it is not there: nearly always the
  // last one (a free's time is the latest; most blocks die in its bucket).
  static Cell& cell(std::vector<Cell>& row, uint32_t index) {
    if (!row.empty() && row.back().index == index) [[likely]] return row.back();
    return insert(row, index);
  }
  static Cell& insert(std::vector<Cell>& row, uint32_t index);
  // Doubles the width until `t` is below kCells widths, merging each row's
  // neighbours.
  void coarsen(uint64_t t);

  std::vector<std::vector<Cell>> rows_;  // by stack id
  unsigned shift_ = 0;
};

}  // namespace memloupe::analysis
