#include "analysis/alloc_stacks.h"

#include <gtest/gtest.h>

#include "support/test_script.h"

namespace memloupe::analysis {
namespace {

TEST(AllocStacks, BacktracesOfTheWantedIdsOnly) {
  testing::Script s;
  s.thread(0, 0, 100, "main");
  const format::AllocId a = s.alloc(1, 10, {0x10, 0x20});
  const format::AllocId b = s.alloc(2, 20, {0x30});
  const format::AllocId c = s.alloc(3, 30, {0x10, 0x20});
  s.free(b, 4);
  const format::AllocId wanted[] = {c, a, c, format::AllocId{99}};
  AllocStacksBuilder builder(s.info, wanted);
  for (const format::Event& e : s.events) builder.add(e);
  const AllocStacks out = std::move(builder).finish({}, s.symbols);
  ASSERT_EQ(out.stack_of.size(), 2u);
  EXPECT_EQ(out.stack_of.at(a.value), out.stack_of.at(c.value));  // one interned stack
  const auto frames = out.stacks.frames(out.stack_of.at(a.value));
  EXPECT_EQ(std::vector<uint64_t>(frames.begin(), frames.end()), (std::vector<uint64_t>{0x10, 0x20}));
  EXPECT_FALSE(out.stack_of.contains(b.value));
  ASSERT_EQ(out.overview.threads.size(), 1u);
  EXPECT_EQ(out.overview.threads[0].name, "main");
}

TEST(AllocStacks, IdsOutOfOrderAreStillFound) {
  testing::Script s;
  const format::AllocId a = s.alloc(1, 10, {0x10});
  const format::AllocId b = s.alloc(2, 10, {0x20});
  // A hand-made trace whose third Alloc reuses an earlier id.
  format::Alloc late = std::get<format::Alloc>(s.events[0]);
  late.id = format::AllocId{0};
  const format::AllocId wanted[] = {a, b};
  AllocStacksBuilder builder(s.info, wanted);
  builder.add(s.events[1]);
  builder.add(late);
  const AllocStacks out = std::move(builder).finish({}, {});
  EXPECT_TRUE(out.stack_of.contains(a.value));
  EXPECT_TRUE(out.stack_of.contains(b.value));
}

}  // namespace
}  // namespace memloupe::analysis
