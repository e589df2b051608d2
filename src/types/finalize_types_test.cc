#include "types/finalize_types.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace memloupe::types {
namespace {

// Feeds `sizes` as Allocs of the site at `frame`, through `key` (a reader's
// key with or without the memo of the site's index).
void feed(TypesAddon& addon, const uint64_t* frame, std::vector<uint64_t> sizes, const reader::BacktraceKey& key) {
  for (uint64_t size : sizes) {
    format::Alloc a;
    a.size = size;
    a.backtrace = {frame, 1};
    addon.alloc(a, key);
  }
}

// The sites' smallest and largest sizes and bytes, as the table and the stats
// show them with no module to infer types from: a site of one size is listed
// as Unknown of that size, a site of mixed sizes is not. The sizes go through
// each of alloc()'s ways: a size between the smallest and largest once the
// gcd is 1, the smallest or largest again, and one that lowers the gcd.
TEST(TypesAddon, KeepsEachSitesSmallestAndLargestSizeAndItsBytes) {
  static const uint64_t kOne = 0x1000, kOnes = 0x2000, kMixed = 0x3000, kMemo = 0x4000;
  uint32_t memo = 0;
  reader::BacktraceKey memoised;
  memoised.addon_memo = &memo;
  TypesAddon addon;
  feed(addon, &kOne, {48, 48, 48}, {});            // one size, met again as min and max
  feed(addon, &kOnes, {1, 1, 1}, {});              // gcd 1 from the first size on
  feed(addon, &kMixed, {24, 16, 20, 18, 24}, {});  // gcd 8, then 4, then 2, sizes in between
  feed(addon, &kMemo, {32, 32}, memoised);         // the site's index from the key's memo
  EXPECT_EQ(memo, 4u);  // (index + 1)
  symbolize::Symbolizer symbolizer;
  symbolize::ModuleMap modules;
  addon.chunks(symbolizer, modules, {});
  EXPECT_EQ(addon.stats().sites, 4u);
  EXPECT_EQ(addon.stats().bytes, 3u * 48 + 3 + 24 + 16 + 20 + 18 + 24 + 64);
  const TypeTable& t = addon.table();
  ASSERT_TRUE(t.contains(kOne));
  EXPECT_EQ(t.at(kOne).block_size, 48u);
  EXPECT_EQ(t.at(kOne).rule, TypeRule::Unknown);
  ASSERT_TRUE(t.contains(kOnes));
  EXPECT_EQ(t.at(kOnes).block_size, 1u);
  EXPECT_FALSE(t.contains(kMixed));
  ASSERT_TRUE(t.contains(kMemo));
  EXPECT_EQ(t.at(kMemo).block_size, 32u);
}

// A site whose sizes have no common divisor left still sees a new smallest
// or largest size: one size then another makes it mixed.
TEST(TypesAddon, ASiteOfGcdOneThatGrowsIsMixed) {
  static const uint64_t kSite = 0x5000;
  TypesAddon addon;
  feed(addon, &kSite, {1, 1, 7}, {});
  symbolize::Symbolizer symbolizer;
  symbolize::ModuleMap modules;
  addon.chunks(symbolizer, modules, {});
  EXPECT_FALSE(addon.table().contains(kSite));
  EXPECT_EQ(addon.stats().bytes, 9u);
}

}  // namespace
}  // namespace memloupe::types
