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

// Keyed interning gives the ids of plain interning, as a reader's backtrace
// cache gives the keys: a slot repeats its backtrace until it is refilled (a
// new serial), possibly with another backtrace, possibly with one seen before.
TEST(StackTable, KeyedInterningGivesThePlainIds) {
  StackTable keyed, plain;
  constexpr uint32_t kCacheSlots = 7;  // few slots: many refills
  std::vector<reader::BacktraceKey> cache(kCacheSlots);
  std::vector<std::vector<uint64_t>> held(kCacheSlots);
  uint64_t serial = 0, hits = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint32_t slot = static_cast<uint32_t>((i * 2654435761u) >> 7) % kCacheSlots;
    if (cache[slot].serial == 0 || i % 5 == 0) {  // a refill: another (or the same) backtrace
      held[slot] = {0x1000 + i % 13, 0x2000 + i % 41, 0x3000};
      held[slot].resize(3 + i % 4, 0x4000 + slot);
      cache[slot] = reader::BacktraceKey{++serial, slot};
    } else {
      ++hits;
    }
    const auto want = plain.intern(held[slot]);
    // Every fourth Alloc without a key (a reader that does not know).
    const auto got = i % 4 == 3 ? keyed.intern(held[slot]) : keyed.intern(held[slot], cache[slot]);
    ASSERT_EQ(got, want) << "alloc " << i;
  }
  EXPECT_GT(hits, 10000u);
  EXPECT_EQ(keyed.size(), plain.size());
}

// The same with the reader's memos (BacktraceKey::memo): a word per slot,
// zeroed at each refill, in which the table keeps the slot's id.
TEST(StackTable, MemoisedInterningGivesThePlainIds) {
  StackTable keyed, plain;
  constexpr uint32_t kCacheSlots = 7;
  std::vector<reader::BacktraceKey> cache(kCacheSlots);
  std::vector<uint32_t> memo(kCacheSlots);
  std::vector<std::vector<uint64_t>> held(kCacheSlots);
  uint64_t serial = 0, memoised = 0;
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint32_t slot = static_cast<uint32_t>((i * 2654435761u) >> 7) % kCacheSlots;
    if (cache[slot].serial == 0 || i % 5 == 0) {
      held[slot] = {0x1000 + i % 13, 0x2000 + i % 41, 0x3000};
      held[slot].resize(3 + i % 4, 0x4000 + slot);
      memo[slot] = 0;
      cache[slot] = reader::BacktraceKey{++serial, slot, &memo[slot]};
    } else {
      memoised += memo[slot] != 0;
    }
    const auto want = plain.intern(held[slot]);
    const auto got = keyed.intern(held[slot], cache[slot]);
    ASSERT_EQ(got, want) << "alloc " << i;
    ASSERT_EQ(memo[slot], want.first + 1) << "alloc " << i;
  }
  EXPECT_GT(memoised, 10000u);
  EXPECT_EQ(keyed.size(), plain.size());
}

}  // namespace
}  // namespace memloupe::analysis
