#include "recorder/unwind/rule_cache.h"

#include <gtest/gtest.h>

#include <random>

namespace memloupe::recorder::unwind_detail {
namespace {

TEST(Rule, PacksIntoItsBitsAndBack) {
  const Rule rules[] = {
      frame_rule(CfaBase::kRsp, 8, 0),
      frame_rule(CfaBase::kRbp, 16, 2),
      frame_rule(CfaBase::kRsp, Rule::kMaxCfaOffset - 8, 255),
      kind_rule(RuleKind::kOutermost),
      kind_rule(RuleKind::kSignal),
      kind_rule(RuleKind::kUnknown),
      kind_rule(RuleKind::kFallback),
      kind_rule(RuleKind::kNoInfo),
  };
  for (const Rule& r : rules) {
    EXPECT_LT(pack_rule(r), 1u << kRuleBits);
    EXPECT_EQ(unpack_rule(pack_rule(r)), r);
  }
}

// A rule derived from the address, so that a wrong hit is detectable.
Rule rule_for_test(uint64_t pc) {
  return frame_rule(pc & 1 ? CfaBase::kRbp : CfaBase::kRsp, 8 * (1 + pc % 1000),
                    static_cast<uint8_t>(pc % 256));
}

// Test instances map their own table; it lives as long as the process, as the
// global one does.
TEST(RuleCache, FindsWhatWasInsertedAndNothingElse) {
  RuleCache cache;
  EXPECT_FALSE(cache.find(0x401000).has_value());  // before any insert: no table
  std::mt19937_64 rng(7);
  std::vector<uint64_t> pcs(1000);
  for (uint64_t& pc : pcs) pc = 0x7f0000000000 + (rng() & 0xffffffffff);
  for (const uint64_t pc : pcs) cache.insert(pc, rule_for_test(pc));
  size_t hits = 0;
  for (const uint64_t pc : pcs) {
    const std::optional<Rule> r = cache.find(pc);
    if (r) {
      ++hits;
      EXPECT_EQ(*r, rule_for_test(pc));
    }
    EXPECT_FALSE(cache.find(pc + 0x1000000000).has_value() &&
                 *cache.find(pc + 0x1000000000) == rule_for_test(pc));
  }
  // Losing one needs 5 of the 1000 keys in one of 16384 buckets (expected number of
  // such buckets: about 1e-4); the seed is fixed, so this is deterministic anyway.
  EXPECT_EQ(hits, pcs.size());
  EXPECT_EQ(cache.count(), pcs.size());
}

TEST(RuleCache, KeepsAtMostItsCapacityAndStaysCorrect) {
  RuleCache cache;
  const size_t n = RuleCache::kSlots * 2;
  for (uint64_t i = 0; i < n; ++i) cache.insert(0x400000 + 5 * i, rule_for_test(0x400000 + 5 * i));
  EXPECT_LE(cache.count(), RuleCache::kSlots);
  size_t hits = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t pc = 0x400000 + 5 * i;
    if (const std::optional<Rule> r = cache.find(pc)) {
      ++hits;
      EXPECT_EQ(*r, rule_for_test(pc));
    }
  }
  EXPECT_GT(hits, RuleCache::kSlots / 2);
}

TEST(RuleCache, ReinsertReplacesAndClearEmpties) {
  RuleCache cache;
  cache.insert(0x401234, kind_rule(RuleKind::kFallback));
  cache.insert(0x401234, frame_rule(CfaBase::kRsp, 24, 0));
  EXPECT_EQ(cache.find(0x401234), frame_rule(CfaBase::kRsp, 24, 0));
  EXPECT_EQ(cache.count(), 1u);
  cache.clear();
  EXPECT_EQ(cache.count(), 0u);
  EXPECT_FALSE(cache.find(0x401234).has_value());
}

TEST(RuleCache, IgnoresAddressesAboveUserSpaceAndEmptyRules) {
  RuleCache cache;
  cache.insert(uint64_t{1} << 47, frame_rule(CfaBase::kRsp, 8, 0));
  cache.insert(0x401000, kind_rule(RuleKind::kEmpty));
  EXPECT_EQ(cache.count(), 0u);
  EXPECT_FALSE(cache.find(uint64_t{1} << 47).has_value());
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
