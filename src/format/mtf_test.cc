#include "format/mtf.h"

#include <gtest/gtest.h>

#include <string>

namespace memloupe::format {
namespace {

auto eq = [](const std::string& a, const std::string& b) { return a == b; };

TEST(MoveToFront, FindUsePush) {
  MoveToFront<std::string> m;
  EXPECT_EQ(m.find(std::string("a"), eq), m.kMiss);
  m.push("a");
  m.push("b");
  m.push("c");  // c b a
  EXPECT_EQ(m.find(std::string("a"), eq), 2u);
  EXPECT_EQ(m.use(2), "a");  // a c b
  EXPECT_EQ(m.find(std::string("a"), eq), 0u);
  EXPECT_EQ(m.find(std::string("b"), eq), 2u);
  EXPECT_EQ(m.size(), 3u);
}

TEST(MoveToFront, HoldsAtMost31AndDropsTheOldest) {
  MoveToFront<std::string> m;
  for (int i = 0; i < 40; ++i) m.push(std::to_string(i));
  EXPECT_EQ(m.size(), 31u);
  EXPECT_EQ(m.find(std::string("39"), eq), 0u);
  EXPECT_EQ(m.find(std::string("9"), eq), 30u);
  EXPECT_EQ(m.find(std::string("8"), eq), m.kMiss);
}

}  // namespace
}  // namespace memloupe::format
