#include "analysis/fine_series.h"

#include <algorithm>

namespace memloupe::analysis {

FineSeries::Cell& FineSeries::insert(std::vector<Cell>& row, uint32_t index) {
  auto it = std::lower_bound(row.begin(), row.end(), index, [](const Cell& c, uint32_t i) { return c.index < i; });
  if (it == row.end() || it->index != index) it = row.insert(it, Cell{index, {}, {}});
  return *it;
}

void FineSeries::coarsen(uint64_t t) {
  unsigned steps = 0;
  while ((t >> (shift_ + steps)) >= kCells) ++steps;
  shift_ += steps;
  for (std::vector<Cell>& row : rows_) {
    size_t out = 0;
    for (const Cell& c : row) {
      const uint32_t index = c.index >> steps;
      if (out > 0 && row[out - 1].index == index) {
        row[out - 1].allocated += c.allocated;
        row[out - 1].freed += c.freed;
      } else {
        row[out] = c;
        row[out].index = index;
        ++out;
      }
    }
    row.resize(out);
  }
}

}  // namespace memloupe::analysis
