#include "analysis/fine_series.h"

namespace memloupe::analysis {

void FineSeries::coarsen(uint64_t t) {
  unsigned steps = 0;
  while ((t >> (shift_ + steps)) >= kCells) ++steps;
  shift_ += steps;
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

}  // namespace memloupe::analysis
