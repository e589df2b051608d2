#include "analysis/zeroed_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

namespace memloupe::analysis {
namespace {

struct Cell {
  uint64_t a = 0, b = 0, c = 0;
};

// The series replay's tables (aggregate.cc) count into cells they never
// clear: every cell must start at zero, be writable, and move with the table.
TEST(ZeroedPages, CellsStartAtZeroAndMoveWithTheTable) {
  const size_t n = (size_t{5} << 20) / sizeof(Cell) + 7;  // a few huge pages and a ragged end
  ZeroedPages<Cell> table(n);
  ASSERT_EQ(table.size(), n);
  for (size_t i = 0; i < n; i += 1 + i / 3) {
    EXPECT_EQ(table[i].a + table[i].b + table[i].c, 0u) << i;
    table[i].b += i;
  }
  table[n - 1].c = 42;
  ZeroedPages<Cell> moved(std::move(table));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(moved.size(), n);
  EXPECT_EQ(moved[n - 1].c, 42u);
  EXPECT_EQ(moved[3].b, 3u);  // (i = 0, 1, 2, 3, 5, ...)
  ZeroedPages<Cell> assigned(1);
  assigned = std::move(moved);
  EXPECT_EQ(assigned[n - 1].c, 42u);
  ZeroedPages<Cell> none(0);
  EXPECT_EQ(none.size(), 0u);
}

}  // namespace
}  // namespace memloupe::analysis
