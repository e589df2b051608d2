// The backtrace-cache hash (docs/FORMAT.md §5.5): version 2's resumed form
// equals its from-scratch definition on every prefix, and version 1's value is
// the one version-1 traces were written with.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "format/history.h"
#include "format/shared_frames.h"

namespace memloupe::format {
namespace {

// Backtraces as a program makes them: a stack that grows and shrinks by a few
// frames between allocations, with a pool of frames small enough to repeat.
std::vector<std::vector<uint64_t>> stack_walk(uint64_t seed, size_t count, size_t max_depth) {
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> outer;  // outermost first
  std::vector<std::vector<uint64_t>> out;
  for (size_t k = 0; k < count; ++k) {
    const size_t pop = rng() % 6 == 0 ? rng() % (outer.size() + 1) : rng() % 4;
    outer.resize(outer.size() - std::min(pop, outer.size()));
    for (size_t push = rng() % 6; push > 0 && outer.size() < max_depth; --push)
      outer.push_back(0x400000 + 0x10 * (rng() % 300));
    out.emplace_back(outer.rbegin(), outer.rend());  // innermost first
  }
  return out;
}

size_t shared_outer_scalar(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[a.size() - 1 - i] == b[b.size() - 1 - i]) ++i;
  return i;
}

TEST(BacktraceHash, ResumedEqualsFromScratchOnEveryPrefix) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    BacktraceHasher hasher;
    std::vector<uint64_t> prev;
    for (const std::vector<uint64_t>& bt : stack_walk(seed, 3000, seed == 4 ? 256 : 90)) {
      const size_t n = bt.size();
      const size_t common = shared_outer_scalar(bt, prev);
      const auto outer = [&](size_t i) { return bt[n - 1 - i]; };
      ASSERT_EQ(hasher.resume(common, n, outer), backtrace_hash(bt));
      // The state after each outermost prefix depends on that prefix alone:
      // resuming with nothing fresh gives the prefix's own hash.
      for (size_t k = 0; k <= n; ++k)
        ASSERT_EQ(hasher.resume(k, k, outer), backtrace_hash(std::span(bt).last(k))) << "prefix " << k;
      prev = bt;
    }
  }
}

TEST(BacktraceHash, DepthAndOrderMatter) {
  const std::vector<uint64_t> a = {1, 2, 3}, reversed = {3, 2, 1}, longer = {0, 1, 2, 3};
  EXPECT_NE(backtrace_hash(a), backtrace_hash(reversed));
  EXPECT_NE(backtrace_hash(a), backtrace_hash(longer));
  EXPECT_NE(backtrace_hash(std::span<const uint64_t>()), backtrace_hash(std::vector<uint64_t>{0}));
}

// Version 1 as written in docs/FORMAT.md (values computed from that text).
TEST(BacktraceHash, VersionOneIsUnchanged) {
  std::vector<uint64_t> bt;
  for (uint64_t i = 0; i < 7; ++i) bt.push_back(0x401000 + 0x40 * i);
  EXPECT_EQ(backtrace_hash_v1(bt), 7060839861000387528ull);
  EXPECT_EQ(backtrace_hash_v1({}), 7640891576956012809ull);
}

TEST(SharedFrames, CountsTheOuterFramesUpToTheFirstDifference) {
  std::mt19937_64 rng(5);
  for (int round = 0; round < 20000; ++round) {
    const size_t na = rng() % 40, nb = rng() % 40;
    std::vector<uint64_t> a(na), b(nb);
    for (auto& f : a) f = rng() % 3;  // few values: long equal runs
    for (size_t i = 0; i < nb; ++i) b[nb - 1 - i] = i < na && rng() % 8 ? a[na - 1 - i] : rng() % 3;
    const size_t most = std::min(na, nb);
    ASSERT_EQ(shared_outer_frames(a.data() + na, b.data() + nb, most), shared_outer_scalar(a, b))
        << "round " << round;
  }
}

}  // namespace
}  // namespace memloupe::format
