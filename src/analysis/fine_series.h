// FineSeries: a Mode::All trace's blocks summed per stack into time buckets
// of a power-of-two width while the events stream (each allocation at its
// time, each freed block at its free), so that the series' final buckets,
// whose width needs the run's duration, are made at the end from these sums
// instead of from a log of every freed block.
//
// The fine width is 2^shift() ns, the smallest power of two that keeps every
// time seen below kCells widths (neighbours are merged when the times grow
// past that). Times only grow, so each event adds to its stack's last cell or
// a new one after it. At the end each fine bucket inside one final bucket
// adds its sums to it; a fine bucket that a final bucket's boundary falls in
// ("straddles": at most one per boundary, ~100 of kCells) is replayed from
// the exact times instead (AggregateBuilder::Impl::replay_fine). Whole
// numbers, so any grouping gives pass 2's sums. Only blocks of one sample
// (every block of a Mode::All trace but a damaged one's): a cell's samples
// are its blocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace memloupe::analysis {

class FineSeries {
 public:
  // Fine buckets per stack at most: 5-10 per final bucket of the index's
  // 100, so 10-20% of the blocks lie in straddling ones; 32 bytes a cell.
  static constexpr uint32_t kCells = 1024;

  struct Cell {
    uint32_t index = 0;  // the fine bucket: [index << shift, (index + 1) << shift)
    uint32_t allocated = 0, freed = 0;  // blocks (a full count starts a cell of the same index)
    uint64_t allocated_bytes = 0, freed_bytes = 0;
  };

  void add_stack() { rows_.emplace_back(); }
  unsigned shift() const { return shift_; }

  // A block of `stack` allocated at `t`, the latest time so far.
  void allocated(uint32_t stack, uint64_t t, uint64_t size) {
    Cell& c = last(rows_[stack], index_of(t), &Cell::allocated);
    ++c.allocated;
    c.allocated_bytes += size;
  }
  // A block of `stack` allocated at `alloc_ns` freed at `free_ns`, the latest
  // time so far. True when the two lie in different fine buckets (at the
  // width then).
  bool freed(uint32_t stack, uint64_t alloc_ns, uint64_t free_ns, uint64_t size) {
    Cell& c = last(rows_[stack], index_of(free_ns), &Cell::freed);
    ++c.freed;
    c.freed_bytes += size;
    return alloc_ns >> shift_ != c.index;
  }

  const std::vector<Cell>& row(uint32_t stack) const { return rows_[stack]; }
  void clear() { rows_ = {}; }

 private:
  uint32_t index_of(uint64_t t) {
    if ((t >> shift_) >= kCells) [[unlikely]] coarsen(t);
    return static_cast<uint32_t>(t >> shift_);
  }
  // The row's cell of `index`, the last or a new one after it.
  static Cell& last(std::vector<Cell>& row, uint32_t index, uint32_t Cell::*count) {
    if (!row.empty() && row.back().index == index && row.back().*count != ~uint32_t{0}) [[likely]]
      return row.back();
    return row.emplace_back(Cell{.index = index});
  }
  // Doubles the width until `t` is below kCells widths, merging each row's
  // neighbours.
  void coarsen(uint64_t t);

  std::vector<std::vector<Cell>> rows_;  // by stack id
  unsigned shift_ = 0;
};

}  // namespace memloupe::analysis
