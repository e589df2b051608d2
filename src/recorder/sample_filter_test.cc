#include "recorder/sample_filter.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "recorder/random.h"

namespace memloupe::recorder {
namespace {

using Filter = CountingFilter<16>;

TEST(SampleFilterTest, CountsAddsAndRemoves) {
  auto f = std::make_unique<Filter>();
  EXPECT_FALSE(f->may_contain(0x5000));
  f->add(0x5000);
  f->add(0x5000);  // the same address twice (e.g. realloc in place)
  EXPECT_TRUE(f->may_contain(0x5000));
  f->remove(0x5000);
  EXPECT_TRUE(f->may_contain(0x5000));
  f->remove(0x5000);
  EXPECT_FALSE(f->may_contain(0x5000));
  f->remove(0x5000);  // never below zero
  EXPECT_FALSE(f->may_contain(0x5000));
}

TEST(SampleFilterTest, NoFalseNegativesAndFewFalsePositives) {
  auto f = std::make_unique<Filter>();
  Rng r{77};
  std::vector<uint64_t> live;
  for (int i = 0; i < 1000; ++i) live.push_back((r.next() & 0x7fffffffff0) + 0x10);
  for (uint64_t a : live) f->add(a);
  for (uint64_t a : live) ASSERT_TRUE(f->may_contain(a));
  // Expected false-positive rate ~ 1000 / 65536 = 1.5%; heap-like addresses
  // (consecutive 16-byte blocks) must not cluster into a few slots.
  int false_positives = 0;
  constexpr int kProbes = 100'000;
  for (int i = 0; i < kProbes; ++i) false_positives += f->may_contain(0x555500000000 + 16 * uint64_t(i));
  EXPECT_LT(false_positives, kProbes * 3 / 100);
}

TEST(SampleFilterTest, SaturatedSlotsStaySet) {
  auto f = std::make_unique<Filter>();
  for (int i = 0; i < 300; ++i) f->add(0x9000);
  for (int i = 0; i < 300; ++i) f->remove(0x9000);
  EXPECT_TRUE(f->may_contain(0x9000));  // a lookup too many, never a missed free
}

TEST(SampleFilterTest, ClearEmptiesEverySlot) {
  auto f = std::make_unique<Filter>();
  for (uint64_t a = 16; a < 16 * 5000; a += 16) f->add(a);
  f->clear();
  for (uint64_t a = 16; a < 16 * 5000; a += 16) ASSERT_FALSE(f->may_contain(a));
}

}  // namespace
}  // namespace memloupe::recorder
