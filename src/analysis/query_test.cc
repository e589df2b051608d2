#include "analysis/query.h"

#include <gtest/gtest.h>

#include "analysis/model.h"

namespace memloupe::analysis {
namespace {

TEST(ParseTime, UnitsPercentAndNames) {
  EXPECT_EQ(parse_time("1.5s")->value, 1.5e9);
  EXPECT_EQ(parse_time("200ms")->value, 200e6);
  EXPECT_EQ(parse_time("30us")->value, 30e3);
  EXPECT_EQ(parse_time("7ns")->value, 7);
  EXPECT_EQ(parse_time("2")->value, 2e9);  // bare numbers are seconds
  EXPECT_EQ(parse_time(" 1min ")->value, 60e9);
  EXPECT_EQ(parse_time("30%")->kind, TimeSpec::Kind::Percent);
  EXPECT_EQ(parse_time("30%")->value, 30);
  EXPECT_EQ(parse_time("peak")->kind, TimeSpec::Kind::Peak);
  EXPECT_EQ(parse_time("END")->kind, TimeSpec::Kind::End);
  EXPECT_FALSE(parse_time("soon").ok());
  EXPECT_FALSE(parse_time("5 parsecs").ok());
  EXPECT_FALSE(parse_time("-1s").ok());
  EXPECT_FALSE(parse_time("101%").ok());
  EXPECT_FALSE(parse_time("").ok());
}

TEST(ParseSize, BinaryPrefixes) {
  EXPECT_EQ(*parse_size("100"), 100u);
  EXPECT_EQ(*parse_size("4k"), 4096u);
  EXPECT_EQ(*parse_size("4KiB"), 4096u);
  EXPECT_EQ(*parse_size("4kB"), 4096u);
  EXPECT_EQ(*parse_size("1.5M"), 1572864u);
  EXPECT_EQ(*parse_size("2GiB"), 2147483648u);
  EXPECT_EQ(*parse_size("12B"), 12u);
  EXPECT_FALSE(parse_size("12 apples").ok());
  EXPECT_FALSE(parse_size("lots").ok());
}

Overview overview_with(uint64_t duration, uint64_t peak) {
  Overview o;
  o.duration_ns = duration;
  o.peak.time_ns = peak;
  return o;
}

TEST(Resolve, InstantSelectsLiveAndRangeSelectsAllocated) {
  const Overview o = overview_with(1'000'000'000, 250);
  QueryArgs at;
  at.at = {"50%"};
  Query q = resolve(at, o).value();
  ASSERT_TRUE(q.filter.window);
  EXPECT_EQ(q.filter.window->begin_ns, 500'000'000u);
  EXPECT_TRUE(q.filter.window->instant());
  EXPECT_EQ(q.filter.test, WindowTest::Live);
  EXPECT_EQ(q.live_window->begin_ns, 500'000'000u);

  QueryArgs between;
  between.at = {"100ms", "200ms"};
  q = resolve(between, o).value();
  EXPECT_EQ(q.filter.window->begin_ns, 100'000'000u);
  EXPECT_EQ(q.filter.window->end_ns, 200'000'000u);
  EXPECT_EQ(q.filter.test, WindowTest::Allocated);

  between.test = WindowTest::Freed;
  EXPECT_EQ(resolve(between, o).value().filter.test, WindowTest::Freed);
}

TEST(Resolve, PeakEndAndDefaults) {
  const Overview o = overview_with(1000, 250);
  QueryArgs none;
  Query q = resolve(none, o).value();
  EXPECT_FALSE(q.filter.window);
  EXPECT_FALSE(q.live_window);  // "live" means live at the peak by default
  EXPECT_EQ(q.temporary_ns, 10'000u);

  QueryArgs peak;
  peak.at_peak = true;
  EXPECT_EQ(resolve(peak, o).value().filter.window->end_ns, 250u);
  QueryArgs end;
  end.at_end = true;
  EXPECT_EQ(resolve(end, o).value().filter.window->begin_ns, 1000u);
}

TEST(Resolve, WhatNeedsTheFirstPass) {
  QueryArgs plain;
  plain.min_size = "1k";
  plain.thread = 2;
  plain.focus = {"f"};
  EXPECT_FALSE(needs_first_pass(plain));
  QueryArgs series = plain;  // (built online: aggregate.h)
  series.series_buckets = 10;
  EXPECT_FALSE(needs_first_pass(series));
  for (auto set : std::vector<void (*)(QueryArgs&)>{
           [](QueryArgs& a) { a.at = {"1s"}; }, [](QueryArgs& a) { a.at_peak = true; },
           [](QueryArgs& a) { a.at_end = true; }, [](QueryArgs& a) { a.min_lifetime = "1ms"; },
           [](QueryArgs& a) { a.max_lifetime = "1ms"; },
           [](QueryArgs& a) { a.temporary = "1%"; }}) {
    QueryArgs a = plain;
    set(a);
    EXPECT_TRUE(needs_first_pass(a));
  }
}

TEST(Resolve, FiltersAndErrors) {
  const Overview o = overview_with(2'000'000, 0);
  QueryArgs a;
  a.min_size = "1k";
  a.max_size = "2k";
  a.min_lifetime = "10%";
  a.max_lifetime = "1ms";
  a.thread = 3;
  a.focus = {"parse"};
  const Query q = resolve(a, o).value();
  EXPECT_EQ(q.filter.min_size, 1024u);
  EXPECT_EQ(q.filter.max_size, 2048u);
  EXPECT_EQ(q.filter.min_lifetime_ns, 200'000u);
  EXPECT_EQ(q.filter.max_lifetime_ns, 1'000'000u);
  EXPECT_EQ(q.filter.thread->value, 3u);
  EXPECT_EQ(q.filter.focus, std::vector<std::string>{"parse"});

  QueryArgs two;
  two.at = {"1s"};
  two.at_peak = true;
  EXPECT_TRUE(validate(two));
  QueryArgs backwards;
  backwards.at = {"2ms", "1ms"};
  EXPECT_FALSE(resolve(backwards, o).ok());
  QueryArgs test_without_time;
  test_without_time.test = WindowTest::Live;
  EXPECT_TRUE(validate(test_without_time));
  QueryArgs peak_lifetime;
  peak_lifetime.min_lifetime = "peak";
  EXPECT_TRUE(validate(peak_lifetime));
}

}  // namespace
}  // namespace memloupe::analysis
