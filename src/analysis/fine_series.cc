#include "analysis/fine_series.h"

namespace memloupe::analysis {

void FineSeries::coarsen(uint64_t t) {
  unsigned steps = 0;
  while ((t >> (shift_ + steps)) >= kCells) ++steps;
  shift_ += steps;
  marked_ = ~uint64_t{0};  // (a bucket's number at the old width says nothing at the new one)
  auto fits = [](uint32_t a, uint32_t b) { return uint64_t{a} + b <= ~uint32_t{0}; };
  for (std::vector<Cell>& row : rows_) {
    size_t out = 0;
    for (size_t i = 0; i < row.size(); ++i) {
      Cell c = row[i];
      c.index >>= steps;
      Cell* into = out > 0 ? &row[out - 1] : nullptr;
      if (into && into->index == c.index && fits(into->allocated, c.allocated) && fits(into->freed, c.freed)) {
        into->allocated += c.allocated;
        into->freed += c.freed;
        into->allocated_bytes += c.allocated_bytes;
        into->freed_bytes += c.freed_bytes;
      } else {
        row[out++] = c;
      }
    }
    row.resize(out);
  }
}

FineSeries::Cell& FineSeries::add_cell(std::vector<Cell>& row, uint32_t index) {
  return row.emplace_back(Cell{.index = index});
}

void FineSeries::new_block() {
  if (!blocks_.empty()) blocks_.back().resize(used_);
  blocks_.emplace_back(kBlock);
  used_ = 0;
}

}  // namespace memloupe::analysis
