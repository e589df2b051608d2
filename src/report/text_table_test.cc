#include "report/text_table.h"

#include <gtest/gtest.h>

namespace memloupe::report {
namespace {

TEST(TextTable, AlignsColumnsByDisplayWidth) {
  TextTable t;
  t.add_column("n", TextTable::Align::Right);
  t.add_column("time", TextTable::Align::Right);
  t.add_column("name", TextTable::Align::Left);
  t.add_row({Cell{"1"}, Cell{"12 µs"}, Cell{"short"}}, {"← caller"});
  t.add_row({Cell{"10"}, Cell{"3 ms"}, Cell{"a longer one"}});
  EXPECT_EQ(t.render(),
            " n   time  name\n"
            "──  ─────  ────────────\n"
            " 1  12 µs  short\n"
            "           ← caller\n"
            "10   3 ms  a longer one\n");
}

TEST(TextTable, CutsTheLastColumnToAWidth) {
  TextTable t;
  t.add_column("n", TextTable::Align::Right);
  t.add_column("name", TextTable::Align::Left);
  t.add_row({Cell{"1"}, Cell{std::string(40, 'x')}}, {"← " + std::string(40, 'y')});
  const std::string out = t.render(25);  // 3 columns of "n  ", 22 left for names
  EXPECT_EQ(out,
            "n  name\n"
            "─  ──────────────────────\n"
            "1  " + std::string(21, 'x') + "…\n"
            "   ← " + std::string(19, 'y') + "…\n");
}

TEST(TextTable, CsvQuotesAndExpandsRawValues) {
  TextTable t;
  t.add_column("bytes", TextTable::Align::Right, {"bytes", "bytes_lo", "bytes_hi"});
  t.add_column("site", TextTable::Align::Left);
  t.add_row({Cell{"1.0 KiB [0.9, 1.1]", {"1024", "900", "1100"}}, Cell{"f(int, char)"}});
  t.add_row({Cell{"x", {"1", "2", "3"}}, Cell{"say \"hi\""}});
  EXPECT_EQ(t.csv(),
            "bytes,bytes_lo,bytes_hi,site\n"
            "1024,900,1100,\"f(int, char)\"\n"
            "1,2,3,\"say \"\"hi\"\"\"\n");
}

TEST(TextTable, RejectsRowsOfTheWrongShape) {
  TextTable t;
  t.add_column("a", TextTable::Align::Left, {"a1", "a2"});
  EXPECT_THROW(t.add_row({Cell{"x"}, Cell{"y"}}), std::logic_error);
  EXPECT_THROW(t.add_row({Cell{"x"}}), std::logic_error);  // one raw value for two CSV columns
}

}  // namespace
}  // namespace memloupe::report
