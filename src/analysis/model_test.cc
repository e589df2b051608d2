// The model on a scripted trace whose answers are worked out by hand below.
#include "analysis/model.h"

#include <gtest/gtest.h>

#include <cmath>

#include <cstring>
#include <random>
#include <tuple>

#include "support/test_script.h"

namespace memloupe::analysis {
namespace {

using testing::Script;

// The worked example of test_script.h.
class ModelTest : public ::testing::Test {
 protected:
  ModelTest() { testing::worked_example(s); }

  // Allocated bytes of the whole selection (exact: --all).
  double total(const Model& m, Metric metric = Metric::Allocated) const {
    return m.aggregate.estimator.bytes(m.aggregate.totals[metric]).value;
  }
  double total_with(QueryArgs args, Metric metric = Metric::Allocated) const { return total(s.run(args), metric); }

  // The node reached by following function names from the root.
  const Node* find(const Model& m, std::vector<std::string> path) const {
    NodeId at = CallTree::kRoot;
    for (const std::string& name : path) {
      const Node& n = m.tree.node(at);
      bool found = false;
      for (NodeId c : n.children) {
        if (m.tree.frame(m.tree.node(c).frame).function == name) {
          at = c;
          found = true;
          break;
        }
      }
      if (!found) return nullptr;
    }
    return &m.tree.node(at);
  }
  double bytes(const Model& m, const Node* n, Metric metric) const {
    return m.aggregate.estimator.bytes(n->total[metric]).value;
  }

  Script s;
};

TEST_F(ModelTest, Overview) {
  const Model m = s.run();
  const Overview& o = m.overview;
  EXPECT_EQ(o.duration_ns, 100u);
  EXPECT_EQ(o.alloc_events, 6u);
  EXPECT_EQ(o.free_events, 5u);
  EXPECT_EQ(o.unmatched_frees, 1u);
  EXPECT_EQ(o.allocated.bytes, 6650u);
  EXPECT_EQ(o.leaked.bytes, 350u);
  EXPECT_EQ(o.leaked.blocks, 2u);
  EXPECT_EQ(o.peak.time_ns, 50u);
  EXPECT_EQ(o.peak.live.bytes, 6200u);
  EXPECT_EQ(o.peak.alloc->value, 3u);
  ASSERT_EQ(o.threads.size(), 2u);
  EXPECT_EQ(o.threads[1].name, "worker");
  EXPECT_EQ(o.threads[1].os_tid, 101u);
  ASSERT_EQ(o.markers.size(), 1u);
  EXPECT_EQ(o.markers[0].name, "phase 2");
  EXPECT_EQ(o.peak_rss, 1u << 20);
  EXPECT_EQ(o.end_reason, format::EndReason::Exit);
  double max = 0;
  for (const HeapPoint& p : o.heap.points) max = std::max(max, p.live_max);
  EXPECT_EQ(max, 6200);
  EXPECT_EQ(o.heap.points.back().live_end, 350);
}

TEST_F(ModelTest, MetricsPerSite) {
  const Model m = s.run();
  const Node* parse = find(m, {"main", "run", "parse"});
  const Node* load = find(m, {"main", "run", "load", "make_buffer"});
  const Node* unknown = find(m, {"main", "0xa3"});
  ASSERT_TRUE(parse && load && unknown);
  EXPECT_EQ(bytes(m, parse, Metric::Allocated), 350);
  EXPECT_EQ(parse->total[Metric::Allocated].blocks, 3u);
  EXPECT_EQ(bytes(m, parse, Metric::Freed), 300);
  EXPECT_EQ(bytes(m, parse, Metric::Leaked), 50);
  EXPECT_EQ(bytes(m, parse, Metric::Peak), 200);
  EXPECT_EQ(bytes(m, parse, Metric::Temporary), 300);  // a0 and a2: freed by their own thread
  EXPECT_EQ(bytes(m, load, Metric::Allocated), 1300);
  EXPECT_EQ(bytes(m, load, Metric::Peak), 1000);  // a1 was freed at the peak's instant, after it
  EXPECT_EQ(bytes(m, load, Metric::Leaked), 300);
  EXPECT_EQ(bytes(m, unknown, Metric::Temporary), 0);  // freed by another thread
  EXPECT_EQ(bytes(m, unknown, Metric::Peak), 5000);
  // Without a time selection, Live is the Peak metric.
  EXPECT_EQ(total(m, Metric::Live), 6200);
  EXPECT_EQ(total(m, Metric::Peak), 6200);
  EXPECT_EQ(total(m, Metric::Temporary), 1300);
  // Totals up the tree.
  EXPECT_EQ(bytes(m, find(m, {"main"}), Metric::Allocated), 6650);
  EXPECT_EQ(bytes(m, find(m, {"main", "run"}), Metric::Allocated), 1650);
  EXPECT_EQ(bytes(m, &m.tree.node(CallTree::kRoot), Metric::Allocated), 6650);
}

TEST_F(ModelTest, InlinedFramesAreExpanded) {
  const Model m = s.run();
  const Node* push_back = find(m, {"main", "run", "parse", "std::vector<int>::push_back"});
  ASSERT_NE(push_back, nullptr);
  const Frame& f = m.tree.frame(push_back->frame);
  EXPECT_TRUE(f.inlined);
  EXPECT_TRUE(f.symbolized);
  EXPECT_EQ(f.file, "parse.cc");
  EXPECT_EQ(f.line, 12u);
  EXPECT_FALSE(m.tree.frame(find(m, {"main", "run", "parse"})->frame).inlined);
  EXPECT_EQ(bytes(m, push_back, Metric::Allocated), 350);
  EXPECT_EQ(push_back->self[Metric::Allocated].bytes, 350u);
  EXPECT_TRUE(push_back->children.empty());
}

TEST_F(ModelTest, ThreadsAndLifetimes) {
  const Model m = s.run();
  ASSERT_EQ(m.aggregate.threads.size(), 2u);
  EXPECT_EQ(m.aggregate.threads[0].metrics[Metric::Allocated].bytes, 6150u);
  EXPECT_EQ(m.aggregate.threads[1].metrics[Metric::Allocated].bytes, 500u);
  const LifetimeHistogram& h = m.aggregate.lifetimes;
  // Lifetimes 20 (a0), 30 (a1), 20 (a3) fall in [16, 32); 50 (a2) in [32, 64).
  EXPECT_EQ(LifetimeHistogram::bucket_of(20), 5u);
  EXPECT_EQ(LifetimeHistogram::bucket_floor(5), 16u);
  EXPECT_EQ(h.freed[5].blocks, 3u);
  EXPECT_EQ(h.freed[5].bytes, 6100u);
  EXPECT_EQ(h.freed[6].bytes, 200u);
  EXPECT_EQ(h.never_freed.bytes, 350u);
}

TEST_F(ModelTest, TimeSelections) {
  QueryArgs at;
  at.at = {"55ns"};
  EXPECT_EQ(total_with(at), 5200);  // a2, a3
  QueryArgs between;
  between.at = {"45ns", "65ns"};
  EXPECT_EQ(total_with(between), 5300);  // allocated in the range: a3, a4
  between.test = WindowTest::Live;
  EXPECT_EQ(total_with(between), 6500);  // a1 (freed at 50), a2, a3, a4
  between.test = WindowTest::Freed;
  EXPECT_EQ(total_with(between), 1000);  // a1
  QueryArgs end;
  end.at_end = true;
  EXPECT_EQ(total_with(end), 350);  // the leaks
  QueryArgs peak;
  peak.at_peak = true;
  // By event order, as the peak itself (6200 B, 3 blocks): a1 is freed at the
  // peak's instant but after the peak's allocation, so it was live then.
  EXPECT_EQ(total_with(peak), 6200);
  EXPECT_EQ(total_with(peak, Metric::Live), 6200);
  peak.test = WindowTest::Allocated;  // an explicit test keeps the window's meaning
  EXPECT_EQ(total_with(peak), 5000);  // a3, allocated at the peak's instant
  // --at also moves the Live metric.
  EXPECT_EQ(total_with(at, Metric::Live), 5200);
}

TEST_F(ModelTest, AllocationFilters) {
  QueryArgs size;
  size.min_size = "200";
  size.max_size = "1000";
  EXPECT_EQ(total_with(size), 1500);  // a1, a2, a4
  QueryArgs lifetime;
  lifetime.max_lifetime = "20ns";
  EXPECT_EQ(total_with(lifetime), 5150);  // a0, a3, a5 (never freed: lives 100 − 80)
  lifetime.max_lifetime.clear();
  lifetime.min_lifetime = "40ns";
  EXPECT_EQ(total_with(lifetime), 500);  // a2 (50), a4 (100 − 60)
  QueryArgs thread;
  thread.thread = 1;
  EXPECT_EQ(total_with(thread), 500);
  QueryArgs focus;
  focus.focus = {"load"};
  EXPECT_EQ(total_with(focus), 1300);
  focus.focus = {"push_back"};  // an inlined frame counts
  EXPECT_EQ(total_with(focus), 350);
  focus.focus = {"0xa3"};  // unsymbolised frames match by their name
  EXPECT_EQ(total_with(focus), 5000);
  focus.focus = {"nothing"};
  const Model none = s.run(focus);
  EXPECT_TRUE(none.aggregate.stacks.empty());
  EXPECT_EQ(none.aggregate.rejected_blocks, 6u);
}

TEST_F(ModelTest, HideDropsFramesNotAllocations) {
  QueryArgs hide;
  hide.hide = {"run"};
  const Model m = s.run(hide);
  EXPECT_EQ(total(m), 6650);
  EXPECT_EQ(find(m, {"main", "run"}), nullptr);
  const Node* parse = find(m, {"main", "parse"});
  ASSERT_NE(parse, nullptr);
  EXPECT_EQ(bytes(m, parse, Metric::Allocated), 350);
}

TEST_F(ModelTest, GroupingByLineAndAddress) {
  QueryArgs line;
  line.grouping = Grouping::Line;
  const Model m = s.run(line);
  const Node* parse = find(m, {"main", "run", "parse"});
  ASSERT_NE(parse, nullptr);
  EXPECT_EQ(m.tree.frame(parse->frame).key, "parse\tparse.cc:12");
  QueryArgs address;
  address.grouping = Grouping::Address;
  const Model a = s.run(address);
  // One frame per address, named by its innermost function.
  const Node* leaf = find(a, {"main", "run", "std::vector<int>::push_back"});
  ASSERT_NE(leaf, nullptr);
  EXPECT_EQ(a.tree.frame(leaf->frame).key, "0xa1");
}

void expect_same_counts(const Count& a, const Count& b, const std::string& what) {
  EXPECT_EQ(a.blocks, b.blocks) << what;
  EXPECT_EQ(a.samples, b.samples) << what;
  EXPECT_EQ(a.bytes, b.bytes) << what;
  EXPECT_NEAR(a.objects, b.objects, 1e-6 * (1 + a.objects)) << what;
}

void expect_same_metrics(const Metrics& a, const Metrics& b, const std::string& what) {
  for (size_t i = 0; i < kMetricCount; ++i) {
    expect_same_counts(a.counts[i], b.counts[i], what + " " + std::string(metric_name(static_cast<Metric>(i))));
  }
}

// Every field of the two Counts, doubles to the bit.
void expect_same_bits(const Count& a, const Count& b, const std::string& what) {
  EXPECT_EQ(std::tie(a.blocks, a.samples, a.bytes), std::tie(b.blocks, b.samples, b.bytes)) << what;
  const double x[] = {a.objects, a.objects_var, a.weighted, a.weighted_sq, a.max_weight};
  const double y[] = {b.objects, b.objects_var, b.weighted, b.weighted_sq, b.max_weight};
  EXPECT_EQ(std::memcmp(x, y, sizeof x), 0) << what;
}

// One pass (lazy per-site copies at each new maximum) and two passes (the peak's
// allocation decides per block) must agree on every count; their series
// (args.series_buckets), built online in both, to the bit.
void expect_one_pass_equals_two(const Script& s, const QueryArgs& args) {
  const Model one = s.run(args, Passes::Fewest), two = s.run(args, Passes::Two);
  EXPECT_EQ(one.aggregate.series_bucket_ns, two.aggregate.series_bucket_ns);
  ASSERT_EQ(one.aggregate.stacks.size(), two.aggregate.stacks.size());
  for (size_t i = 0; i < one.aggregate.stacks.size(); ++i) {
    const auto fa = one.aggregate.frames(StackId{static_cast<uint32_t>(i)});
    const auto fb = two.aggregate.frames(StackId{static_cast<uint32_t>(i)});
    ASSERT_TRUE(std::equal(fa.begin(), fa.end(), fb.begin(), fb.end()));
    expect_same_metrics(one.aggregate.stacks[i].metrics, two.aggregate.stacks[i].metrics, "stack " + std::to_string(i));
    const std::vector<SeriesBucket>& x = one.aggregate.stacks[i].series;
    const std::vector<SeriesBucket>& y = two.aggregate.stacks[i].series;
    EXPECT_EQ(x.empty(), args.series_buckets == 0);
    ASSERT_EQ(x.size(), y.size()) << "stack " << i;
    for (size_t b = 0; b < x.size(); ++b) {
      const std::string what = "stack " + std::to_string(i) + " bucket " + std::to_string(b);
      EXPECT_EQ(x[b].index, y[b].index) << what;
      expect_same_bits(x[b].allocated, y[b].allocated, what + " allocated");
      expect_same_bits(x[b].freed, y[b].freed, what + " freed");
      expect_same_bits(x[b].leaked, y[b].leaked, what + " leaked");
    }
  }
  ASSERT_EQ(one.aggregate.threads.size(), two.aggregate.threads.size());
  for (size_t i = 0; i < one.aggregate.threads.size(); ++i) {
    expect_same_metrics(one.aggregate.threads[i].metrics, two.aggregate.threads[i].metrics, "thread");
  }
  expect_same_metrics(one.aggregate.totals, two.aggregate.totals, "totals");
  EXPECT_EQ(one.aggregate.rejected_blocks, two.aggregate.rejected_blocks);
  for (size_t i = 0; i < LifetimeHistogram::kBuckets; ++i) {
    expect_same_counts(one.aggregate.lifetimes.freed[i], two.aggregate.lifetimes.freed[i], "lifetime");
  }
  EXPECT_EQ(one.overview.peak.time_ns, two.overview.peak.time_ns);
  EXPECT_EQ(one.tree.node_count(), two.tree.node_count());
}

TEST_F(ModelTest, OnePassEqualsTwoPasses) {
  expect_one_pass_equals_two(s, {});
  QueryArgs thread;
  thread.thread = 1;
  expect_one_pass_equals_two(s, thread);
}

TEST(Model, OnePassEqualsTwoPassesOnARandomTrace) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    Script s(mode, 4096);
    std::mt19937_64 rng(11);
    // Many events share a timestamp (time_steps 3).
    const uint64_t t = testing::add_random_heap(
        s, rng, {}, [](auto& r) { return std::vector<uint64_t>{0x100 + r() % 7, 0x200 + r() % 3, 0x300}; },
        [](int, uint64_t) {});
    s.end(t + 10);
    expect_one_pass_equals_two(s, {});
    QueryArgs filtered;
    filtered.min_size = "1000";
    filtered.thread = 2;
    expect_one_pass_equals_two(s, filtered);
    // With series: one pass since 2026-11-26 (their width no longer waits
    // for the duration), the same buckets as two.
    for (uint32_t buckets : {100u, 7u}) {
      QueryArgs series;
      series.series_buckets = buckets;
      ASSERT_FALSE(needs_first_pass(series));
      expect_one_pass_equals_two(s, series);
      filtered.series_buckets = buckets;
      expect_one_pass_equals_two(s, filtered);
    }
  }
}

TEST(Model, SampledCountsScale) {
  Script s(format::Mode::Sampled, 1000);
  const auto a = s.alloc(1, 5000, {0x1}, 0, 4);
  s.alloc(2, 10, {0x1}, 0, 1);
  s.free(a, 3);
  s.end(4);
  const Model m = s.run();
  const Estimator& e = m.aggregate.estimator;
  EXPECT_FALSE(e.exact());
  EXPECT_EQ(e.bytes(m.aggregate.totals[Metric::Allocated]).value, 5000);  // 5 samples × 1000
  EXPECT_EQ(e.bytes(m.aggregate.totals[Metric::Leaked]).value, 1000);
  const Estimate leaked_objects = e.objects(m.aggregate.totals[Metric::Leaked]);
  EXPECT_NEAR(leaked_objects.value, 1 / (1 - std::exp(-10.0 / 1000)), 1e-9);
  EXPECT_EQ(m.overview.peak.live.samples, 5u);
}

TEST(Model, TimeInversionsAreClampedAlike) {
  Script s;
  const auto a = s.alloc(100, 10, {0x1});
  s.alloc(90, 20, {0x1});  // earlier than its predecessor: treated as t = 100
  s.free(a, 95);           // also clamped to 100
  s.end(200);
  QueryArgs at;
  at.at = {"100ns"};
  const Model m = s.run(at);
  EXPECT_EQ(m.overview.time_inversions, 2u);
  EXPECT_EQ(m.aggregate.totals[Metric::Allocated].bytes, 20u);  // a freed at 100 is not live at 100
}

// A series of one bucket whose times pass 2^63 ns (damage, or a hand-made
// trace): the width stops at 2^63 (a shift by 64 would be no shift on x86,
// and the widening never end), and every block is in the one bucket.
TEST(Model, SeriesOfOneBucketStopsWideningAt2To63) {
  Script s;
  const uint64_t late = (uint64_t{1} << 63) + 7;
  const auto a = s.alloc(10, 8, {0x1});
  s.alloc(late, 16, {0x2});
  s.free(a, late + 1);
  s.end(late + 100);
  QueryArgs args;
  args.series_buckets = 1;
  for (Passes passes : {Passes::Fewest, Passes::Two}) {
    const Model m = s.run(args, passes);
    EXPECT_EQ(m.aggregate.series_bucket_ns, uint64_t{1} << 63);
    for (const StackStats& st : m.aggregate.stacks) {
      ASSERT_EQ(st.series.size(), 1u);
      EXPECT_EQ(st.series[0].index, 0u);
      EXPECT_EQ(st.series[0].allocated.blocks, 1u);
    }
  }
  EXPECT_EQ(series_width(late, 1), uint64_t{1} << 63);
}

TEST(Model, SeriesBucketsAddUp) {
  Script s;
  for (uint64_t i = 0; i < 100; ++i) {
    const auto a = s.alloc(i * 10, 8 + i, {0x1 + i % 3});
    if (i % 4 != 0) s.free(a, i * 10 + 25);
  }
  s.end(1000);
  QueryArgs args;
  args.series_buckets = 7;
  const Model m = s.run(args);
  EXPECT_EQ(m.aggregate.series_buckets, 7u);
  for (const StackStats& st : m.aggregate.stacks) {
    uint64_t alloc = 0, freed = 0, leaked = 0;
    uint32_t last = 0;
    for (const SeriesBucket& b : st.series) {
      EXPECT_LT(b.index, 7u);
      EXPECT_GE(b.index, last);
      last = b.index;
      alloc += b.allocated.bytes;
      freed += b.freed.bytes;
      leaked += b.leaked.bytes;
    }
    EXPECT_EQ(alloc, st.metrics[Metric::Allocated].bytes);
    EXPECT_EQ(freed, st.metrics[Metric::Freed].bytes);
    EXPECT_EQ(leaked, st.metrics[Metric::Leaked].bytes);
  }
}

}  // namespace
}  // namespace memloupe::analysis
