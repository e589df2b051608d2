#include "analysis/live_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <unordered_map>
#include <utility>
#include <vector>

namespace memloupe::analysis {
namespace {

using Reference = std::unordered_map<uint64_t, uint64_t>;

// A window slot that keeps no id (as the Aggregate's BlockSlot): its value
// marks it vacant (no test stores this value).
struct KeylessSlot {
  static constexpr bool kKeyless = true;
  static constexpr uint64_t kVacant = ~uint64_t{0} - 1;
  uint64_t value = kVacant;

  bool holds(uint64_t) const { return value != kVacant; }
  bool empty() const { return value == kVacant; }
  void set(uint64_t, uint64_t v) { value = v; }
  void clear() { value = kVacant; }
};

// Takes `key` (maybe absent) from both, which must agree.
template <class Table>
void take_from_both(Table& table, Reference& reference, uint64_t key) {
  uint64_t out = 0;
  const bool took = table.take(key, out);
  auto it = reference.find(key);
  ASSERT_EQ(took, it != reference.end()) << key;
  if (took) {
    EXPECT_EQ(out, it->second);
    reference.erase(it);
  }
}

// The table's walk and lookups give the reference's keys and values.
template <class Table>
void holds_the_same(Table& table, const Reference& reference) {
  size_t seen = 0;
  table.for_each([&](uint64_t key, uint64_t value) {
    ++seen;
    ASSERT_EQ(reference.at(key), value);
  });
  EXPECT_EQ(seen, reference.size());
  for (const auto& [key, value] : reference) {
    const uint64_t* found = table.find(key);
    ASSERT_NE(found, nullptr);
    EXPECT_EQ(*found, value);
  }
}

// Differential test against std::unordered_map, through growth and shrinking.
template <class Table>
void behaves_like_a_map() {
  Table table;
  Reference reference;
  std::mt19937_64 rng(7);
  uint64_t next = 0;
  for (int round = 0; round < 200'000; ++round) {
    // Grow for the first half, shrink for the second.
    const bool grow = round < 100'000 ? rng() % 4 != 0 : rng() % 4 == 0;
    if (grow || reference.empty()) {
      const uint64_t key = next++;
      table.insert(key, key * 3);
      reference[key] = key * 3;
    } else {
      // Take a random old key (maybe already gone).
      take_from_both(table, reference, rng() % next);
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  holds_the_same(table, reference);
}

TEST(LiveTable, BehavesLikeAMap) { behaves_like_a_map<LiveTable<uint64_t>>(); }

// Other windows (the Aggregate's is 64 Ki ids): the same answers, with more or
// fewer of the keys moved to the hash part.
TEST(LiveTable, BehavesLikeAMapWithAnyWindow) {
  behaves_like_a_map<LiveTable<uint64_t, 64>>();
  behaves_like_a_map<LiveTable<uint64_t, 65536>>();
}

// Keyless slots: the same answers (a slot holds only the id of the window
// that maps to it, so its value's mark is enough).
TEST(LiveTable, BehavesLikeAMapWithKeylessSlots) {
  behaves_like_a_map<LiveTable<uint64_t, 64, KeylessSlot>>();
  behaves_like_a_map<LiveTable<uint64_t, 16384, KeylessSlot>>();
}

// Keys that share home slots (multiples of every power-of-two capacity apart):
// long Robin Hood runs, swaps on insertion, shifts on deletion.
TEST(LiveTable, CollidingKeysBehaveLikeAMap) {
  LiveTable<uint64_t> table;
  std::unordered_map<uint64_t, uint64_t> reference;
  std::mt19937_64 rng(3);
  for (int round = 0; round < 100'000; ++round) {
    const uint64_t key = (rng() % 64) << 20 | (rng() % 8);
    if (rng() % 2) {
      table.insert(key, round);
      reference[key] = round;
    } else {
      uint64_t out = 0;
      const bool took = table.take(key, out);
      ASSERT_EQ(took, reference.count(key) == 1);
      if (took) {
        EXPECT_EQ(out, reference[key]);
        reference.erase(key);
      }
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  for (const auto& [key, value] : reference) {
    ASSERT_NE(table.find(key), nullptr);
    EXPECT_EQ(*table.find(key), value);
  }
}

// Ids that mostly come one after the other (the window steps on by one, inline)
// with jumps past the window (the general advance) and a few behind it, as a
// hand-made trace may have: the same answers as a map, the same live blocks.
template <class Table>
void steps_and_jumps_behave_like_a_map() {
  Table table;
  Reference reference;
  std::mt19937_64 rng(11);
  uint64_t next = 0;
  for (int round = 0; round < 100'000; ++round) {
    const unsigned r = rng() % 16;
    if (r < 9 || reference.empty()) {
      const uint64_t key = r == 0 ? next + rng() % 300 : r == 1 && next > 100 ? next - rng() % 100 : next;
      next = std::max(next, key + 1);
      table.insert(key, round);
      reference[key] = static_cast<uint64_t>(round);
    } else {
      take_from_both(table, reference, next - 1 - rng() % std::min<uint64_t>(next, 200));
    }
    ASSERT_EQ(table.size(), reference.size());
  }
  holds_the_same(table, reference);
}

TEST(LiveTable, StepsAndJumpsBehaveLikeAMap) {
  steps_and_jumps_behave_like_a_map<LiveTable<uint64_t, 64>>();
  steps_and_jumps_behave_like_a_map<LiveTable<uint64_t, 64, KeylessSlot>>();
}

// An id one window past a live one, which shares its slot, is absent, and
// the walk gives each live block's own id as the window moves on.
template <class Table>
void an_id_a_window_ahead_is_not_the_one_in_its_slot() {
  Table table;
  table.insert(5, 50);
  uint64_t out = 0;
  EXPECT_FALSE(table.take(5 + 64, out));
  EXPECT_EQ(table.find(5 + 64), nullptr);
  EXPECT_EQ(*table.find(5), 50u);
  for (uint64_t id = 60; id < 100; ++id) table.insert(id, id * 10);  // the window moves to [36, 100)
  EXPECT_FALSE(table.take(60 + 64, out));  // slot 60 holds 60
  EXPECT_EQ(table.find(60 + 64), nullptr);
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  table.for_each([&](uint64_t key, uint64_t value) { seen.emplace_back(key, value); });
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(seen.size(), 41u);
  EXPECT_EQ(seen.front(), std::make_pair(uint64_t{5}, uint64_t{50}));  // left behind: the hash part
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_EQ(seen[i], std::make_pair(59 + i, (59 + i) * 10));
  ASSERT_TRUE(table.take(5, out));
  EXPECT_EQ(out, 50u);
  ASSERT_TRUE(table.take(99, out));
  EXPECT_EQ(out, 990u);
  EXPECT_EQ(table.size(), 39u);
}

TEST(LiveTable, AnIdAWindowAheadIsNotTheOneInItsSlot) {
  an_id_a_window_ahead_is_not_the_one_in_its_slot<LiveTable<uint64_t, 64>>();
  an_id_a_window_ahead_is_not_the_one_in_its_slot<LiveTable<uint64_t, 64, KeylessSlot>>();
}

TEST(LiveTable, InsertOverwrites) {
  LiveTable<int> table;
  table.insert(5, 1);
  table.insert(5, 2);
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(*table.find(5), 2);
  int out = 0;
  EXPECT_FALSE(table.take(6, out));
}


// The walk stops once it has met every block in the window (for_each), yet
// meets the last slot's, an overwritten one's once, and the hash part's.
template <class Table>
void the_walk_meets_every_block() {
  Table table;
  for (uint64_t id = 0; id < 64; ++id) table.insert(id, id + 1);
  uint64_t out = 0;
  for (uint64_t id = 1; id < 63; ++id) ASSERT_TRUE(table.take(id, out));
  table.insert(63, 630);  // overwritten: still one block
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  table.for_each([&](uint64_t key, uint64_t value) { seen.emplace_back(key, value); });
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 1}, {63, 630}}));
  table.insert(64, 640);  // the window moves on: 0 to the hash part, 64 into slot 0
  seen.clear();
  table.for_each([&](uint64_t key, uint64_t value) { seen.emplace_back(key, value); });
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<std::pair<uint64_t, uint64_t>>{{0, 1}, {63, 630}, {64, 640}}));
}

TEST(LiveTable, TheWalkMeetsEveryBlock) {
  the_walk_meets_every_block<LiveTable<uint64_t, 64>>();
  the_walk_meets_every_block<LiveTable<uint64_t, 64, KeylessSlot>>();
}

// The window's pages: every slot the value given, a copy its own; one of 2
// MiB or more starts on a 2 MiB boundary (where a transparent huge page can
// back it: slot_array.h).
TEST(SlotArray, HoldsItsValuesOnPagesOfItsOwn) {
  constexpr size_t kBig = (size_t{2} << 20) / sizeof(uint64_t) + 3;
  SlotArray<uint64_t> big(kBig, 7);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&big[0]) % (size_t{2} << 20), 0u);
  for (size_t i = 0; i < kBig; ++i) ASSERT_EQ(big[i], 7u) << i;
  big[kBig - 1] = 9;
  const SlotArray<uint64_t> copy = big;
  big[kBig - 1] = 10;
  EXPECT_EQ(copy[kBig - 1], 9u);
  EXPECT_EQ(copy[0], 7u);
  SlotArray<uint64_t> small(5, 3);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&small[0]) % 4096, 0u);
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(small[i], 3u);
}

}  // namespace
}  // namespace memloupe::analysis
