#include "recorder/address_table.h"

#include <gtest/gtest.h>

#include <unordered_map>

#include "recorder/random.h"

namespace memloupe::recorder {
namespace {

TEST(AddressTableTest, InsertTakeAndReplace) {
  AddressTable t;
  EXPECT_FALSE(t.take(0x1000));
  ASSERT_TRUE(t.insert(0x1000, 7));
  ASSERT_TRUE(t.insert(0x2000, 8));
  ASSERT_TRUE(t.insert(0x1000, 9));  // replaces
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.take(0x1000), 9u);
  EXPECT_FALSE(t.take(0x1000));
  EXPECT_EQ(t.take(0x2000), 8u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(AddressTableTest, GrowsAndKeepsEverything) {
  AddressTable t;
  constexpr uint64_t kN = 100'000;  // many doublings from 4096 slots
  for (uint64_t i = 1; i <= kN; ++i) ASSERT_TRUE(t.insert(i * 16, i));
  EXPECT_EQ(t.size(), kN);
  for (uint64_t i = 1; i <= kN; ++i) ASSERT_EQ(t.take(i * 16), i) << i;
  EXPECT_EQ(t.size(), 0u);
}

// The load bound: a quarter up to 2 MiB of slots (short probe runs for the
// flush thread's lookups), a half beyond (the memory of large tables).
TEST(AddressTableTest, GrowsAtAQuarterWhileSmallAndAtHalfBeyond) {
  AddressTable t;
  const auto fill_to = [&](uint64_t n) {
    for (uint64_t i = t.size() + 1; i <= n; ++i) ASSERT_TRUE(t.insert(i * 16, i));
  };
  fill_to(1024);
  EXPECT_EQ(t.slots(), 4096u);
  fill_to(1025);
  EXPECT_EQ(t.slots(), 8192u);
  fill_to(32'768);
  EXPECT_EQ(t.slots(), 131'072u);
  fill_to(32'769);
  EXPECT_EQ(t.slots(), 262'144u);  // 2 MiB were a quarter full: doubles once more
  fill_to(131'072);
  EXPECT_EQ(t.slots(), 262'144u);  // and now grows at half full
  fill_to(131'073);
  EXPECT_EQ(t.slots(), 524'288u);
  EXPECT_EQ(t.size(), 131'073u);
  t.clear();
  EXPECT_EQ(t.slots(), 0u);
  ASSERT_TRUE(t.insert(16, 1));
  EXPECT_EQ(t.slots(), 4096u);
}

// Random inserts and removals against std::unordered_map: backward-shift
// deletion must never lose or resurrect an entry.
TEST(AddressTableTest, MatchesAReferenceMapUnderChurn) {
  AddressTable t;
  std::unordered_map<uint64_t, uint64_t> ref;
  Rng r{123};
  // A small address space so keys collide and probe runs get long.
  for (int op = 0; op < 400'000; ++op) {
    const uint64_t key = ((r.next() % 20'000) + 1) * 16;
    if (r.next() % 3 != 0) {
      const uint64_t v = r.next();
      ASSERT_TRUE(t.insert(key, v));
      ref[key] = v;
    } else {
      const auto got = t.take(key);
      const auto it = ref.find(key);
      if (it == ref.end()) {
        ASSERT_FALSE(got) << key;
      } else {
        ASSERT_EQ(got, it->second) << key;
        ref.erase(it);
      }
    }
    ASSERT_EQ(t.size(), ref.size());
  }
  for (const auto& [k, v] : ref) ASSERT_EQ(t.take(k), v);
  EXPECT_EQ(t.size(), 0u);
}

TEST(AddressTableTest, ClearForgetsAndStillWorks) {
  AddressTable t;
  ASSERT_TRUE(t.insert(0x10, 1));
  t.clear();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.take(0x10));
  ASSERT_TRUE(t.insert(0x10, 2));
  EXPECT_EQ(t.take(0x10), 2u);
}

}  // namespace
}  // namespace memloupe::recorder
