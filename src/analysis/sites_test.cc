#include "analysis/sites.h"

#include <gtest/gtest.h>

#include <cmath>

#include "analysis/diff.h"
#include "support/test_script.h"

namespace memloupe::analysis {
namespace {

using testing::Script;

// main → f → alloc_a   100 B × 2
// main → g → alloc_a    50 B × 1
// main → f → alloc_b    10 B × 3
// main → f → f → alloc_b 7 B × 1   (recursion: f at two addresses)
Script make_script(uint64_t base = 0) {
  Script s;
  s.symbol(base + 0x1, {"alloc_a"});
  s.symbol(base + 0x2, {"f"});
  s.symbol(base + 0x3, {"main"});
  s.symbol(base + 0x4, {"g"});
  s.symbol(base + 0x5, {"alloc_b"});
  s.symbol(base + 0x6, {"f"});
  uint64_t t = 0;
  for (int i = 0; i < 2; ++i) s.alloc(++t, 100, {base + 0x1, base + 0x2, base + 0x3});
  s.alloc(++t, 50, {base + 0x1, base + 0x4, base + 0x3});
  for (int i = 0; i < 3; ++i) s.alloc(++t, 10, {base + 0x5, base + 0x2, base + 0x3});
  s.alloc(++t, 7, {base + 0x5, base + 0x2, base + 0x6, base + 0x3});
  return s;
}

std::vector<std::string> names(const CallTree& tree, const std::vector<FrameId>& frames) {
  std::vector<std::string> out;
  for (FrameId f : frames) out.push_back(tree.frame(f).function);
  return out;
}

TEST(Sites, DepthGroupsByInnermostFrames) {
  const Script s = make_script();
  const Model m = s.run();
  const Estimator& e = m.aggregate.estimator;

  std::vector<Site> whole = collect_sites(m.tree, 0);
  EXPECT_EQ(whole.size(), 4u);

  std::vector<Site> one = collect_sites(m.tree, 1);
  sort_sites(one, SortKey{Metric::Allocated, false}, e);
  ASSERT_EQ(one.size(), 2u);
  EXPECT_EQ(names(m.tree, one[0].frames), std::vector<std::string>{"alloc_a"});
  EXPECT_EQ(one[0].metrics[Metric::Allocated].bytes, 250u);
  EXPECT_EQ(one[1].metrics[Metric::Allocated].bytes, 37u);
  // By count, alloc_b (4 blocks) comes first.
  sort_sites(one, SortKey{Metric::Allocated, true}, e);
  EXPECT_EQ(names(m.tree, one[0].frames), std::vector<std::string>{"alloc_b"});

  std::vector<Site> two = collect_sites(m.tree, 2);
  sort_sites(two, SortKey{}, e);
  ASSERT_EQ(two.size(), 3u);
  EXPECT_EQ(names(m.tree, two[0].frames), (std::vector<std::string>{"alloc_a", "f"}));
  EXPECT_EQ(two[0].metrics[Metric::Allocated].bytes, 200u);
  EXPECT_EQ(names(m.tree, two[2].frames), (std::vector<std::string>{"alloc_b", "f"}));
  EXPECT_EQ(two[2].metrics[Metric::Allocated].bytes, 37u);
}

TEST(Sites, CallersAndCalleesCountEachAllocationOnce) {
  const Script s = make_script();
  const Model m = s.run();
  const Neighbours n = neighbours_of(m.tree, "f");
  EXPECT_EQ(n.total[Metric::Allocated].bytes, 237u);
  ASSERT_EQ(n.callers.size(), 1u);
  EXPECT_EQ(m.tree.frame(*n.callers[0].frame).function, "main");
  EXPECT_EQ(n.callers[0].metrics[Metric::Allocated].bytes, 237u);
  ASSERT_EQ(n.callees.size(), 2u);
  for (const Neighbour& c : n.callees) {
    const std::string name = m.tree.frame(*c.frame).function;
    EXPECT_EQ(c.metrics[Metric::Allocated].bytes, name == "alloc_a" ? 200u : 37u) << name;
  }
  const Neighbours leaf = neighbours_of(m.tree, "alloc");
  EXPECT_EQ(leaf.matched.size(), 2u);
  ASSERT_EQ(leaf.callees.size(), 1u);
  EXPECT_FALSE(leaf.callees[0].frame);  // they allocate themselves
  EXPECT_EQ(leaf.callees[0].metrics[Metric::Allocated].bytes, 287u);
  EXPECT_TRUE(neighbours_of(m.tree, "nope").callers.empty());
}

TEST(Diff, MatchesByFunctionAcrossAddressLayouts) {
  const Script a_script = make_script();
  Script b_script = make_script(0x10000);  // another load address
  b_script.alloc(100, 1000, {0x10001, 0x10002, 0x10003});   // main → f → alloc_a grows
  b_script.alloc(101, 64, {0x10000 + 0x99, 0x10003});      // a new site
  const Model a = a_script.run();
  const Model b = b_script.run();
  std::vector<DiffRow> rows = diff_sites(a, b, 0);
  ASSERT_EQ(rows.size(), 5u);
  int matched = 0;
  for (const DiffRow& r : rows) {
    const uint64_t ba = r.a[Metric::Allocated].bytes, bb = r.b[Metric::Allocated].bytes;
    if (r.frames == std::vector<std::string>{"alloc_a", "f", "main"}) {
      EXPECT_EQ(ba, 200u);
      EXPECT_EQ(bb, 1200u);
      ++matched;
    } else if (r.frames.size() == 2 && r.frames[1] == "main" && r.frames[0] == "0x10099") {
      EXPECT_EQ(ba, 0u);
      EXPECT_EQ(bb, 64u);
      ++matched;
    } else {
      EXPECT_EQ(ba, bb);
    }
  }
  EXPECT_EQ(matched, 2);
}

TEST(Diff, DifferenceInterval) {
  const Estimate d = difference(Estimate{100, 90, 110}, Estimate{150, 140, 160});
  EXPECT_EQ(d.value, 50);
  EXPECT_NEAR(d.hi - d.value, 10 * std::sqrt(2.0), 1e-9);
  const Estimate exact = difference(Estimate{5, 5, 5}, Estimate{7, 7, 7});
  EXPECT_EQ(exact.lo, 2);
  EXPECT_EQ(exact.hi, 2);
  EXPECT_TRUE(d.bounded);
  // A block count with no sample on either side bounds nothing.
  EXPECT_FALSE(difference(Estimate{0, 0, 0, false}, Estimate{150, 140, 160}).bounded);
  EXPECT_FALSE(difference(Estimate{100, 90, 110}, Estimate{0, 0, 0, false}).bounded);
}

}  // namespace
}  // namespace memloupe::analysis
