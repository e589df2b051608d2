#include "analysis/stack_table.h"

#include <gtest/gtest.h>

#include <map>
#include <vector>

namespace memloupe::analysis {
namespace {

TEST(StackTable, SameFramesSameIdAcrossGrowth) {
  StackTable table;
  std::map<std::vector<uint64_t>, uint32_t> ids;
  for (uint64_t i = 0; i < 5000; ++i) {
    // Stacks that share prefixes and suffixes, of varying depth.
    std::vector<uint64_t> stack = {0x1000 + i % 97, 0x2000, 0x3000 + i / 97};
    stack.resize(3 + i % 5, 0x4000 + i % 3);
    auto [id, is_new] = table.intern(stack);
    auto [it, inserted] = ids.emplace(stack, id);
    EXPECT_EQ(is_new, inserted);
    EXPECT_EQ(it->second, id);
  }
  EXPECT_EQ(table.size(), ids.size());
  for (const auto& [stack, id] : ids) {
    auto frames = table.frames(id);
    EXPECT_EQ(std::vector<uint64_t>(frames.begin(), frames.end()), stack);
    EXPECT_EQ(table.intern(stack), std::make_pair(id, false));
  }
}

TEST(StackTable, EmptyAndPrefixStacksDiffer) {
  StackTable table;
  const uint64_t a[] = {1, 2, 3};
  EXPECT_EQ(table.intern({}).first, 0u);
  EXPECT_EQ(table.intern(std::span(a, 2)).first, 1u);
  EXPECT_EQ(table.intern(std::span(a, 3)).first, 2u);
  EXPECT_EQ(table.intern({}), std::make_pair(uint32_t{0}, false));
}

}  // namespace
}  // namespace memloupe::analysis
