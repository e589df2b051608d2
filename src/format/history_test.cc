#include "format/history.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>

namespace memloupe::format {
namespace {

TEST(History, SizeClassesAreMonotonicAndBounded) {
  EXPECT_EQ(size_class(0), 0u);
  EXPECT_EQ(size_class(1), 1u);
  EXPECT_EQ(size_class(16), 1u);
  EXPECT_EQ(size_class(17), 2u);
  EXPECT_EQ(size_class(1024), 64u);
  EXPECT_EQ(size_class(1025), 65u);
  unsigned prev = 0;
  for (uint64_t s = 0; s < 100000; ++s) {
    const unsigned c = size_class(s);
    EXPECT_GE(c, prev);
    prev = c;
  }
  EXPECT_EQ(size_class(~uint64_t{0}), kSizeClasses - 1);
  for (unsigned b = 10; b < 64; ++b) EXPECT_LT(size_class(uint64_t{1} << b), kSizeClasses);
}

TEST(History, LiveRankAndIdOfRankAreInverse) {
  auto h = std::make_unique<AllocHistory>();
  std::mt19937_64 rng(5);
  std::set<uint64_t> live;
  uint64_t next = 0;
  for (int step = 0; step < 20000; ++step) {
    if (live.empty() || rng() % 2) {
      h->on_alloc(next, 8, 0, Func::Malloc);
      live.insert(next++);
      continue;
    }
    auto it = live.begin();
    std::advance(it, static_cast<long>(rng() % live.size()));
    const uint64_t id = *it;
    const uint64_t rank = h->live_rank(id, next);
    if (next - id <= kRecentAllocs) {
      // The rank counts live allocations newer than id.
      ASSERT_EQ(rank, static_cast<uint64_t>(std::distance(live.upper_bound(id), live.end())));
      ASSERT_EQ(h->id_of_rank(rank, next), id);
    } else {
      ASSERT_EQ(rank, AllocHistory::kNoRank);
    }
    h->on_free(id, next, Func::Free, false);
    live.erase(it);
    ASSERT_EQ(h->live_rank(id, next), AllocHistory::kNoRank);  // freed: no longer live
  }
  EXPECT_EQ(h->id_of_rank(kRecentAllocs, next), AllocHistory::kNoRank);
}

TEST(History, PredictsFreeFunctionFromAllocFunction) {
  auto h = std::make_unique<AllocHistory>();
  h->on_alloc(0, 8, 0, Func::New);
  h->on_alloc(1, 8, 0, Func::Malloc);
  h->on_alloc(2, 8, 0, Func::New);
  EXPECT_EQ(h->predicted_free_func(0, 3), Func::Free);  // nothing learnt yet
  h->on_free(0, 3, Func::DeleteSized, false);
  EXPECT_EQ(h->predicted_free_func(2, 3), Func::DeleteSized);
  EXPECT_EQ(h->predicted_free_func(1, 3), Func::Free);
}

TEST(History, PredictsTheLastFreedAddressOfASizeClass) {
  auto h = std::make_unique<AllocHistory>();
  h->on_alloc(0, 24, 0x1000, Func::Malloc);
  h->on_alloc(1, 32, 0x2000, Func::Malloc);  // same class as 24 (17..32)
  h->on_alloc(2, 100, 0x3000, Func::Malloc);
  EXPECT_EQ(h->predicted_address(24), 0u);
  h->on_free(0, 3, Func::Free, false);
  h->on_free(1, 3, Func::Free, false);
  EXPECT_EQ(h->predicted_address(30), 0x2000u);  // last in, first out
  EXPECT_EQ(h->predicted_address(100), 0u);
  h->on_alloc(3, 20, 0x2000, Func::Malloc);  // reused: popped
  EXPECT_EQ(h->predicted_address(20), 0x1000u);
  EXPECT_EQ(h->previous_address(), 0x2000u);
}

}  // namespace
}  // namespace memloupe::format
