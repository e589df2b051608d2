#include "recorder/sample_filter.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "recorder/random.h"

namespace memloupe::recorder {
namespace {

// 4 count slots under each summary bit, as in the recorder's filter.
using Filter = SummarisedFilter<16, 14>;
static_assert(Filter::kSlotsPerBit == SampleFilter::kSlotsPerBit);

// The first heap-like address after `from` that `pred` accepts.
template <class Pred>
uint64_t find_address(uint64_t from, Pred pred) {
  for (uint64_t a = from + 16;; a += 16)
    if (pred(a)) return a;
}

TEST(SampleFilterTest, CountsAddsAndRemoves) {
  auto f = std::make_unique<Filter>();
  EXPECT_FALSE(f->may_contain(0x5000));
  EXPECT_FALSE(f->slot_may_contain(0x5000));
  f->add(0x5000);
  f->add(0x5000);  // the same address twice (e.g. realloc in place)
  EXPECT_TRUE(f->may_contain(0x5000));
  EXPECT_TRUE(f->slot_may_contain(0x5000));
  f->remove(0x5000);
  EXPECT_TRUE(f->may_contain(0x5000));
  EXPECT_TRUE(f->slot_may_contain(0x5000));
  f->remove(0x5000);
  EXPECT_FALSE(f->may_contain(0x5000));
  EXPECT_FALSE(f->slot_may_contain(0x5000));
  f->remove(0x5000);  // never below zero
  EXPECT_FALSE(f->may_contain(0x5000));
}

TEST(SampleFilterTest, SummaryBitCoversTheSlotsUnderIt) {
  auto f = std::make_unique<Filter>();
  const uint64_t a = 0x7f0000001000;
  // Shares a's summary bit but not its slot; and one under another bit.
  const uint64_t b = find_address(a, [&](uint64_t x) {
    return Filter::bit_of(x) == Filter::bit_of(a) && Filter::slot_of(x) != Filter::slot_of(a);
  });
  const uint64_t other = find_address(a, [&](uint64_t x) { return Filter::bit_of(x) != Filter::bit_of(a); });
  f->add(a);
  EXPECT_TRUE(f->may_contain(b));  // the summary cannot tell them apart...
  EXPECT_FALSE(f->slot_may_contain(b));  // ...the slots can
  EXPECT_FALSE(f->may_contain(other));
  f->add(b);
  f->remove(a);  // b's slot is still non-zero: the shared bit must stay set
  EXPECT_TRUE(f->may_contain(b));
  EXPECT_TRUE(f->slot_may_contain(b));
  EXPECT_FALSE(f->slot_may_contain(a));
  f->remove(b);
  EXPECT_FALSE(f->may_contain(a));
  EXPECT_FALSE(f->may_contain(b));

  // The other order: the block added last is removed first.
  f->add(a);
  f->add(b);
  f->remove(b);
  EXPECT_TRUE(f->may_contain(a));
  EXPECT_TRUE(f->slot_may_contain(a));
  f->remove(a);
  EXPECT_FALSE(f->may_contain(a));
}

TEST(SampleFilterTest, AddressesSharingASlotKeepItUntilBothLeave) {
  auto f = std::make_unique<Filter>();
  const uint64_t a = 0x55aa00002000;
  const uint64_t c = find_address(a, [&](uint64_t x) { return Filter::slot_of(x) == Filter::slot_of(a); });
  f->add(a);
  f->add(c);
  f->remove(c);
  EXPECT_TRUE(f->may_contain(a));
  EXPECT_TRUE(f->slot_may_contain(a));
  f->remove(a);
  EXPECT_FALSE(f->may_contain(c));
  EXPECT_FALSE(f->slot_may_contain(c));
}

// Random adds and removes in a filter small enough that most entries collide,
// checked after every step against a model: a bit must be set exactly when some
// live address maps to it (set too rarely: missed frees; too often: lookups).
TEST(SampleFilterTest, MatchesAModelUnderHeavyCollisions) {
  using Small = SummarisedFilter<10, 8>;
  auto f = std::make_unique<Small>();
  Rng r{2024};
  std::vector<uint64_t> pool;
  for (int i = 0; i < 600; ++i) pool.push_back(0x600000000000 + 16 * (r.next() % 100'000));
  std::map<uint64_t, int> live;  // address -> times added, minus times removed
  for (int step = 0; step < 20'000; ++step) {
    const uint64_t a = pool[r.next() % pool.size()];
    const bool add = live[a] == 0 || (live[a] < 3 && r.next() % 2 == 0);
    if (add) {
      f->add(a);
      ++live[a];
    } else {
      f->remove(a);
      --live[a];
    }
    if (step % 97 != 0) continue;
    std::vector<int> bits(Small::kBits), slots(Small::kSlots);
    for (const auto& [addr, n] : live) {
      bits[Small::bit_of(addr)] += n;
      slots[Small::slot_of(addr)] += n;
    }
    for (uint64_t x : pool) {
      ASSERT_EQ(f->may_contain(x), bits[Small::bit_of(x)] > 0) << "step " << step;
      ASSERT_EQ(f->slot_may_contain(x), slots[Small::slot_of(x)] > 0) << "step " << step;
    }
  }
}

TEST(SampleFilterTest, NoFalseNegativesAndFewFalsePositives) {
  auto f = std::make_unique<Filter>();
  Rng r{77};
  std::vector<uint64_t> live;
  for (int i = 0; i < 1000; ++i) live.push_back((r.next() & 0x7fffffffff0) + 0x10);
  for (uint64_t a : live) f->add(a);
  for (uint64_t a : live) ASSERT_TRUE(f->may_contain(a) && f->slot_may_contain(a));
  // Expected false-positive rates ~ 1000 / 2^14 = 6.1% (summary) and 1000 / 2^16 =
  // 1.5% (slots); heap-like addresses (consecutive 16-byte blocks) must not
  // cluster into a few bits.
  int summary_hits = 0, slot_hits = 0;
  constexpr int kProbes = 100'000;
  for (int i = 0; i < kProbes; ++i) {
    const uint64_t a = 0x555500000000 + 16 * uint64_t(i);
    summary_hits += f->may_contain(a);
    slot_hits += f->slot_may_contain(a);
  }
  EXPECT_LT(summary_hits, kProbes * 8 / 100);
  EXPECT_LT(slot_hits, kProbes * 3 / 100);
}

TEST(SampleFilterTest, SaturatedSlotsStaySet) {
  auto f = std::make_unique<Filter>();
  for (int i = 0; i < 300; ++i) f->add(0x9000);
  for (int i = 0; i < 300; ++i) f->remove(0x9000);
  EXPECT_TRUE(f->may_contain(0x9000));  // a lookup too many, never a missed free
  EXPECT_TRUE(f->slot_may_contain(0x9000));
}

TEST(SampleFilterTest, ClearEmptiesEverySlot) {
  auto f = std::make_unique<Filter>();
  for (uint64_t a = 16; a < 16 * 5000; a += 16) f->add(a);
  f->clear();
  for (uint64_t a = 16; a < 16 * 5000; a += 16) {
    ASSERT_FALSE(f->may_contain(a));
    ASSERT_FALSE(f->slot_may_contain(a));
  }
}

}  // namespace
}  // namespace memloupe::recorder
