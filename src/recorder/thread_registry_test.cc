#include "recorder/thread_registry.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace memloupe::recorder {
namespace {

using format::Func;

TEST(ThreadRegistryTest, SumsSurviveSlotReuse) {
  auto reg = std::make_unique<ThreadRegistry>();
  ThreadSlot* a = reg->claim(1, 100);
  ASSERT_NE(a, nullptr);
  a->counters.add(Func::Malloc, 10);
  a->counters.add(Func::Malloc, 5);
  a->counters.add_call(Func::Free);
  reg->release(a);
  ThreadSlot* b = reg->claim(2, 101);
  EXPECT_EQ(b, a);  // the freed slot is reused, with its counts
  b->counters.add(Func::Malloc, 1);
  format::CallTotals totals{};
  reg->sum(totals);
  EXPECT_EQ(totals.totals[unsigned(Func::Malloc)].calls, 3u);
  EXPECT_EQ(totals.totals[unsigned(Func::Malloc)].bytes, 16u);
  EXPECT_EQ(totals.totals[unsigned(Func::Free)].calls, 1u);
  EXPECT_EQ(reg->find(2), b);
  EXPECT_EQ(reg->find(1), nullptr);
}

TEST(ThreadRegistryTest, GrowsBeyondTheFirstSlabUnderConcurrency) {
  auto reg = std::make_unique<ThreadRegistry>();
  constexpr int kThreads = 8, kEach = 40;  // 320 slots: several slabs
  std::vector<std::vector<ThreadSlot*>> got(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      for (int j = 0; j < kEach; ++j) {
        ThreadSlot* s = reg->claim(uintptr_t(i * 1000 + j + 1), 0);
        ASSERT_NE(s, nullptr);
        s->counters.add(Func::Calloc, 2);
        got[i].push_back(s);
      }
    });
  for (auto& t : threads) t.join();
  std::set<ThreadSlot*> distinct;
  for (const auto& v : got) distinct.insert(v.begin(), v.end());
  EXPECT_EQ(distinct.size(), size_t{kThreads} * kEach);
  format::CallTotals totals{};
  reg->sum(totals);
  EXPECT_EQ(totals.totals[unsigned(Func::Calloc)].calls, uint64_t{kThreads} * kEach);
  EXPECT_EQ(totals.totals[unsigned(Func::Calloc)].bytes, 2u * kThreads * kEach);
}

TEST(ThreadRegistryTest, ResetForChildForgetsEverything) {
  auto reg = std::make_unique<ThreadRegistry>();
  ThreadSlot* a = reg->claim(1, 1);
  a->counters.add(Func::Malloc, 9);
  reg->reset_for_child();
  format::CallTotals totals{};
  reg->sum(totals);
  EXPECT_EQ(totals.totals[unsigned(Func::Malloc)].calls, 0u);
  EXPECT_EQ(reg->find(1), nullptr);
  EXPECT_EQ(reg->claim(3, 3), a);
}

}  // namespace
}  // namespace memloupe::recorder
