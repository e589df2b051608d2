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
// ("straddles": at most one per boundary, ~100 of kCells) is counted from
// the exact times instead: its allocations from this class's log of them
// (in time order, with a mark where each fine bucket begins), its frees from
// the series log (AggregateBuilder::Impl::replay_fine). Whole numbers, so any
// grouping gives pass 2's sums. Only blocks of one sample (every block of a
// Mode::All trace but a damaged one's): a cell's samples are its blocks.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "format/varint.h"

namespace memloupe::analysis {

// A varint of the analysis' own logs (written by format::put_varint in this
// process): no bounds to check.
inline uint64_t get_own_varint(const uint8_t*& p) {
  uint64_t v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
}

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
  struct Allocation {
    uint32_t stack;
    uint64_t time;
    uint64_t size;
  };

  void add_stack() { rows_.emplace_back(); }
  unsigned shift() const { return shift_; }

  // A block of `stack` allocated at `t`, the latest time so far.
  void allocated(uint32_t stack, uint64_t t, uint64_t size) {
    Cell& c = last<&Cell::allocated>(rows_[stack], index_of(t));
    ++c.allocated;
    c.allocated_bytes += size;
    log(stack, t, size);
  }
  // A block of `stack` freed at `t`, the latest time so far.
  void freed(uint32_t stack, uint64_t t, uint64_t size) {
    Cell& c = last<&Cell::freed>(rows_[stack], index_of(t));
    ++c.freed;
    c.freed_bytes += size;
  }

  const std::vector<Cell>& row(uint32_t stack) const { return rows_[stack]; }
  // Calls fn(Allocation) for each allocation of fine bucket `index`.
  template <class Fn>
  void read_allocated(uint32_t index, Fn&& fn) const;
  void clear() {
    rows_ = {};
    blocks_ = {};
    marks_ = {};
  }

 private:
  uint32_t index_of(uint64_t t) {
    if ((t >> shift_) >= kCells) [[unlikely]] coarsen(t);
    return static_cast<uint32_t>(t >> shift_);
  }
  // The row's cell of `index`, the last or a new one after it.
  template <uint32_t Cell::*kCount>
  [[gnu::always_inline]] static Cell& last(std::vector<Cell>& row, uint32_t index) {
    if (!row.empty() && row.back().index == index && row.back().*kCount != ~uint32_t{0}) [[likely]]
      return row.back();
    return add_cell(row, index);
  }
  static Cell& add_cell(std::vector<Cell>& row, uint32_t index);
  // Doubles the width until `t` is below kCells widths, merging each row's
  // neighbours.
  void coarsen(uint64_t t);

  // The allocations' log: stack, time (from the previous), size, varints in
  // blocks appended to without moving; a mark at the first allocation of
  // each fine bucket (at the width then: a later, wider bucket begins at one
  // of them).
  static constexpr size_t kBlock = size_t{1} << 20;
  void log(uint32_t stack, uint64_t t, uint64_t size) {
    if (blocks_.empty() || kBlock - used_ < 3 * format::kMaxVarint) [[unlikely]] new_block();
    if ((t >> shift_) != marked_) [[unlikely]] {
      marked_ = t >> shift_;
      marks_.push_back({t, blocks_.size() - 1, used_, time_});
    }
    uint8_t* const start = blocks_.back().data() + used_;
    uint8_t* p = format::put_varint(start, stack);
    p = format::put_varint(p, t - time_);
    p = format::put_varint(p, size);
    time_ = t;
    used_ += static_cast<size_t>(p - start);
  }
  void new_block();
  struct Mark {
    uint64_t time;  // the allocation's
    size_t block, offset;
    uint64_t base;  // the time its own is relative to
  };

  std::vector<std::vector<Cell>> rows_;  // by stack id
  unsigned shift_ = 0;
  std::vector<std::vector<uint8_t>> blocks_;  // the last one has used_ bytes written
  size_t used_ = 0;
  uint64_t time_ = 0;  // the last allocation's
  std::vector<Mark> marks_;
  uint64_t marked_ = ~uint64_t{0};  // the fine bucket of the last mark, at the width then
};

template <class Fn>
void FineSeries::read_allocated(uint32_t index, Fn&& fn) const {
  const uint64_t begin = uint64_t{index} << shift_, end = uint64_t{index + 1} << shift_;
  // The first mark at or after `begin`: the first allocation in the bucket.
  auto m = std::lower_bound(marks_.begin(), marks_.end(), begin, [](const Mark& k, uint64_t t) { return k.time < t; });
  if (m == marks_.end()) return;
  uint64_t time = m->base;
  for (size_t b = m->block, offset = m->offset; b < blocks_.size(); ++b, offset = 0) {
    const uint8_t* p = blocks_[b].data() + offset;
    const uint8_t* const block_end = blocks_[b].data() + (b + 1 == blocks_.size() ? used_ : blocks_[b].size());
    while (p < block_end) {
      Allocation a;
      a.stack = static_cast<uint32_t>(get_own_varint(p));
      time += get_own_varint(p);
      if (time >= end) return;
      a.time = time;
      a.size = get_own_varint(p);
      fn(a);
    }
  }
}

}  // namespace memloupe::analysis
