// The terminal views on the worked example (tests/support/test_script.h), whose
// answers are worked out by hand there.
#include "report/text_views.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/test_script.h"

namespace memloupe::report {
namespace {

using analysis::Metric;

std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class TextViews : public ::testing::Test {
 protected:
  TextViews() {
    analysis::testing::worked_example(s);
    s.info.argv = {"./prog", "--fast"};
    s.info.pid = 42;
  }
  analysis::testing::Script s;
};

TEST_F(TextViews, Summary) {
  const std::string out = render_summary(s.run(), SummaryOptions{});
  EXPECT_NE(out.find("Command      ./prog --fast\n"), std::string::npos) << out;
  EXPECT_NE(out.find("every call recorded (--all)"), std::string::npos);
  EXPECT_NE(out.find("Threads      2: main (tid 100), worker (tid 101)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Allocated    6.49 KiB in 6 blocks\n"), std::string::npos) << out;   // 6650 B
  EXPECT_NE(out.find("Peak heap    6.05 KiB at 50 ns (live blocks: 3)\n"), std::string::npos) << out;  // 6200 B
  EXPECT_NE(out.find("Leaked       350 B in 2 blocks (live at exit)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Peak RSS     1.00 MiB\n"), std::string::npos);
  EXPECT_NE(out.find("1 frees named blocks the trace never allocated"), std::string::npos);
  EXPECT_NE(out.find("none recorded"), std::string::npos);  // no CallTotals in the example
  // Per thread: main allocated a0, a1, a3, a5 (6150 B; a1 and a3 live at the
  // peak; a5 leaked), worker a2 and a4 (500 B; a2 at the peak; a4 leaked).
  const auto by_thread = lines(out.substr(out.find("By thread")));
  ASSERT_GE(by_thread.size(), 5u);
  EXPECT_EQ(by_thread[1], "thread  allocated  blocks   at peak  leaked  name") << out;
  EXPECT_EQ(by_thread[3], "     0   6.01 KiB       4  5.86 KiB    50 B  main") << out;
  EXPECT_EQ(by_thread[4], "     1      500 B       2     200 B   300 B  worker") << out;
  // The biggest site by allocated bytes is the unsymbolised one (5000 B), named
  // by its caller main (a frame with no source file counts as library code,
  // analysis::first_own_frame), then load/make_buffer (1300 B) with its callers
  // listed under it.
  const auto l = lines(out.substr(out.find("Top 10 sites by allocated bytes")));
  ASSERT_GE(l.size(), 7u);
  EXPECT_EQ(l[1], "#  allocated  blocks  share  site") << out;
  EXPECT_EQ(l[3], "1   4.88 KiB       1  75.2%  main  a.cc:1") << out;      // 5000 of 6650
  EXPECT_EQ(l[4], "                             (+1 library frame inside: --all-frames)");
  EXPECT_EQ(l[5], "2   1.27 KiB       2  19.5%  make_buffer  a.cc:1");  // 1300
  // Template arguments are shortened (short_function_name) unless asked for whole.
  EXPECT_EQ(l[9], "3      350 B       3   5.3%  std::vector<…>::push_back  parse.cc:12 [inlined]");
  EXPECT_EQ(l[10], "                             ← parse  parse.cc:12");
  const std::string leaks = out.substr(out.find("Top 10 sites by leaked bytes"));
  EXPECT_NE(leaks.find("1   300 B       1  85.7%  make_buffer"), std::string::npos) << leaks;
  EXPECT_NE(leaks.find("2    50 B       1  14.3%  std::vector<…>::push_back  parse.cc:12 [inlined]"),
            std::string::npos)
      << leaks;
  SummaryOptions full;
  full.full_names = true;
  const std::string whole = render_summary(s.run(), full);
  EXPECT_NE(whole.find("3      350 B       3   5.3%  std::vector<int>::push_back  parse.cc:12 [inlined]"),
            std::string::npos)
      << whole;
  EXPECT_EQ(whole.find("<…>"), std::string::npos) << whole;
}

TEST_F(TextViews, TopCsvByCountAndDepth) {
  TopOptions o;
  o.key = {Metric::Allocated, true};
  o.depth = 1;
  o.csv = true;
  EXPECT_EQ(render_top(s.run(), o),
            "rank,allocated_bytes,allocated_bytes_lo,allocated_bytes_hi,allocated_blocks,allocated_blocks_lo,"
            "allocated_blocks_hi,share_percent,stack_innermost_first\n"
            "1,350,350,350,3,3,3,50.00,std::vector<int>::push_back\n"
            "2,1300,1300,1300,2,2,2,33.33,make_buffer\n"
            "3,5000,5000,5000,1,1,1,16.67,0xa3\n");
}

TEST_F(TextViews, TopLiveAtATimeWithMinCount) {
  analysis::QueryArgs args;
  args.at = {"55ns"};
  TopOptions o;
  o.key = {Metric::Live, false};
  o.min_count = 1;
  const std::string out = render_top(s.run(args), o);
  EXPECT_NE(out.find("Selection    live at 55 ns\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Sites by live bytes at 55 ns"), std::string::npos) << out;
  EXPECT_NE(out.find("1  4.88 KiB       1  96.2%  main"), std::string::npos) << out;  // 5000 of 5200
  EXPECT_NE(out.find("2     200 B       1   3.8%  std::vector<…>::push_back"), std::string::npos) << out;
  EXPECT_EQ(out.find("make_buffer"), std::string::npos) << out;
}

TEST_F(TextViews, CallersAndCallees) {
  TopOptions o;
  const analysis::Model m = s.run();
  const std::string callers = render_neighbours(m, "run", true, o);
  EXPECT_NE(callers.find("Callers of run, by allocated bytes (total 1.61 KiB)"), std::string::npos) << callers;
  EXPECT_NE(callers.find("1.61 KiB       5  100.0%  main"), std::string::npos) << callers;
  o.csv = true;
  EXPECT_EQ(render_neighbours(m, "run", false, o),
            "allocated_bytes,allocated_bytes_lo,allocated_bytes_hi,allocated_blocks,allocated_blocks_lo,"
            "allocated_blocks_hi,share_percent,callee\n"
            "1300,1300,1300,2,2,2,78.79,load\n"
            "350,350,350,3,3,3,21.21,parse\n");
  EXPECT_NE(render_neighbours(m, "zzz", true, TopOptions{}).find("No function matching 'zzz'"), std::string::npos);
}

TEST_F(TextViews, Leaks) {
  const std::string out = render_leaks(s.run(), TopOptions{});
  EXPECT_NE(out.find("Leaked: 350 B in 2 blocks never freed before exit\n"), std::string::npos) << out;
  EXPECT_LT(out.find("make_buffer"), out.find("push_back"));
  EXPECT_NE(out.find("← load"), std::string::npos);
}

TEST_F(TextViews, Lifetimes) {
  LifetimeOptions o;
  o.csv = true;
  EXPECT_EQ(render_lifetimes(s.run(), o),
            "lifetime_min_ns,lifetime_max_ns,blocks,blocks_lo,blocks_hi,bytes,bytes_lo,bytes_hi,share_percent\n"
            "16,32,3,3,3,6100,6100,6100,50.00\n"
            "32,64,1,1,1,200,200,200,16.67\n"
            ",,2,2,2,350,350,350,33.33\n");
  o.csv = false;
  const std::string out = render_lifetimes(s.run(), o);
  EXPECT_NE(out.find("16 ns – 32 ns"), std::string::npos) << out;
  EXPECT_NE(out.find("never freed"), std::string::npos);
  // a0 (P, thread 0, 20 ns) and a1 (L, 30 ns), a2 (P, thread 1, 50 ns): 3 temporaries of 6.
  EXPECT_NE(out.find("within 10.0 µs): 3 blocks, 50.0% of all; 1.27 KiB"), std::string::npos) << out;
  EXPECT_NE(out.find("Sites by temporary blocks"), std::string::npos);
}

// A trace in ticks of 16 µs (format version 2's --all default): the first row
// is "< 16 µs", the text says the times are whole ticks, and the temporary
// threshold (10 µs, finer than a tick) reads as "within the tick".
TEST(TextViewsLifetimes, CoarseTicksSayTheirResolution) {
  analysis::testing::Script s;
  s.info.time_unit_us = 16;
  for (int i = 0; i < 3; ++i) s.free(s.alloc(16000, 16, {0x1}), 16000);  // in the same tick
  s.free(s.alloc(32000, 16, {0x1}), 48000);                               // one tick later
  s.end(64000);
  LifetimeOptions o;
  const std::string out = render_lifetimes(s.run(), o);
  EXPECT_NE(out.find("< 16.0 µs"), std::string::npos) << out;
  EXPECT_NE(out.find("whole ticks of 16.0 µs"), std::string::npos) << out;
  EXPECT_NE(out.find("within the tick of 16.0 µs): 3 blocks"), std::string::npos) << out;
  EXPECT_EQ(out.find("< 1.00 µs"), std::string::npos) << out;
  o.csv = true;
  const auto rows = lines(render_lifetimes(s.run(), o));
  ASSERT_GE(rows.size(), 3u);
  EXPECT_EQ(rows[1].substr(0, rows[1].find(",3,")), "0,16000") << rows[1];  // [0, 1 tick), 3 blocks
  EXPECT_EQ(rows[2].substr(0, rows[2].find(",1,")), "16000,16384") << rows[2];  // one tick
}

// Back-to-back calls in an --all trace often fall in one µs tick: their
// lifetime is below the trace's resolution, not a measured 0 ns.
TEST(TextViewsLifetimes, SubResolutionLifetimesAreNotZero) {
  analysis::testing::Script s;
  for (int i = 0; i < 3; ++i) s.free(s.alloc(5000, 16, {0x1}), 5000);  // freed in the same tick
  s.free(s.alloc(6000, 16, {0x1}), 8000);                              // 2 µs
  s.end(10000);
  LifetimeOptions o;
  const std::string out = render_lifetimes(s.run(), o);
  EXPECT_EQ(out.find("0 ns"), std::string::npos) << out;
  EXPECT_NE(out.find("< 1.00 µs"), std::string::npos) << out;
  EXPECT_NE(out.find("time resolution"), std::string::npos) << out;
  EXPECT_EQ(out.find("1 ns – "), std::string::npos) << out;  // no empty rows finer than a tick
  o.csv = true;
  const auto rows = lines(render_lifetimes(s.run(), o));
  ASSERT_GE(rows.size(), 2u);
  EXPECT_EQ(rows[1].substr(0, rows[1].find(",3,")), "0,1000") << rows[1];  // [0, 1 µs), 3 blocks
}

// After SIGKILL the recorder's exact counters are those of its last flush, and
// events recorded after it are in the trace but not in the counts: the summary
// says which figure covers what instead of printing both as "exact".
TEST(TextViewsSummary, CountersOlderThanTheEventsAreDated) {
  analysis::testing::Script s;
  s.alloc(10, 100, {0x1});
  format::CallTotals totals;
  totals.time_ns = 20'000;
  totals.totals[static_cast<size_t>(format::Func::Malloc)] = format::FuncTotal{1, 100};
  s.events.push_back(totals);
  s.alloc(30'000, 100, {0x1});  // recorded after the last counters, then killed: no TraceEnd
  const std::string out = render_summary(s.run(), SummaryOptions{});
  EXPECT_NE(out.find("Calls (exact as of 20.0 µs, the recorder's last count"), std::string::npos) << out;
  EXPECT_NE(out.find("events go on to 30.0 µs"), std::string::npos) << out;
}

// C++ sites start in libstdc++ (`std::__new_allocator<…>::allocate ← …`): the
// views start at the innermost frame outside library code, by the report's
// rule, and say what they skipped; --all-frames shows everything.
TEST(TextViewsFrames, SitesStartOutsideTheStandardLibrary) {
  analysis::testing::Script s;
  s.symbol(0x1, {"std::__new_allocator<int>::allocate(unsigned long, void const*)"},
           "/usr/include/c++/12/bits/new_allocator.h", 137);
  s.symbol(0x2, {"std::vector<int, std::allocator<int> >::push_back(int const&)"},
           "/usr/include/c++/12/bits/stl_vector.h", 1287);
  s.symbol(0x3, {"load_table"}, "src/table.cc", 42);
  s.symbol(0x4, {"main"}, "src/main.cc", 7);
  s.symbol(0x5, {"parse_row"}, "src/table.cc", 60);
  s.alloc(10, 100, {0x1, 0x2, 0x3, 0x4});
  s.alloc(20, 50, {0x1, 0x2, 0x5, 0x3, 0x4});
  s.end(100);
  const analysis::Model m = s.run();
  TopOptions o;
  o.key = {analysis::Metric::Allocated, false};
  const std::vector<std::string> top = lines(render_top(m, o));
  auto row_with = [&](const std::string& text) {
    for (const std::string& l : top) {
      if (l.find(text) != std::string::npos) return l;
    }
    return std::string();
  };
  // Each row names the program's frame, so the two rows can be told apart.
  EXPECT_NE(row_with("load_table  src/table.cc:42").find("100 B"), std::string::npos) << render_top(m, o);
  EXPECT_NE(row_with("parse_row  src/table.cc:60").find("50 B"), std::string::npos) << render_top(m, o);
  EXPECT_NE(row_with("(+2 library frames inside: --all-frames)"), "");
  EXPECT_EQ(row_with("← std::vector"), "");
  // The summary's tables follow the same rule.
  const std::string summary = render_summary(m, SummaryOptions{});
  EXPECT_NE(summary.find("load_table  src/table.cc:42\n"), std::string::npos) << summary;
  o.all_frames = true;
  const std::string all = render_top(m, o);
  EXPECT_NE(all.find("std::__new_allocator<…>::allocate()  /usr/include"), std::string::npos) << all;
  EXPECT_NE(all.find("← std::vector<…>::push_back()"), std::string::npos) << all;
  EXPECT_EQ(all.find("library frames inside"), std::string::npos) << all;
  // diff: the same rows, by the program's frame.
  o.all_frames = false;
  analysis::testing::Script b = s;
  b.alloc(30, 70, {0x1, 0x2, 0x5, 0x3, 0x4});
  const std::string d = render_diff(s.run(), b.run(), o);
  EXPECT_NE(d.find("parse_row"), std::string::npos) << d;
  EXPECT_EQ(d.find("std::__new_allocator"), std::string::npos) << d;
  o.all_frames = true;
  EXPECT_NE(render_diff(s.run(), b.run(), o).find("std::__new_allocator"), std::string::npos);
}

// libstdc++'s emergency pool and the loader's blocks are never freed by design:
// leaks lists them apart, not mixed with the program's leaks.
TEST(TextViewsLeaks, OneTimeRuntimeAllocationsAreListedApart) {
  analysis::testing::Script s;
  s.symbol(0x1, {"(anonymous namespace)::pool::pool()"}, "../../../../libstdc++-v3/libsupc++/eh_alloc.cc", 123);
  s.symbol(0x2, {"_dl_allocate_tls"}, "dl-tls.c", 40);
  s.symbol(0x3, {"make_widget"}, "src/widget.cc", 9);
  s.symbol(0x4, {"main"}, "src/main.cc", 3);
  s.alloc(1, 73728, {0x1});
  s.alloc(2, 300, {0x2, 0x4});
  s.alloc(3, 64, {0x3, 0x4});
  s.end(10);
  TopOptions o;
  const std::string out = render_leaks(s.run(), o);
  EXPECT_NE(out.find("Leaked: 64 B in 1 blocks never freed before exit"), std::string::npos) << out;
  const size_t apart = out.find("Known one-time runtime allocations");
  ASSERT_NE(apart, std::string::npos) << out;
  EXPECT_LT(out.find("make_widget"), apart) << out;
  EXPECT_GT(out.find("pool::pool"), apart) << out;
  EXPECT_GT(out.find("_dl_allocate_tls"), apart) << out;
  EXPECT_NE(out.find("libstdc++'s emergency exception pool: 72.0 KiB in 1 blocks"), std::string::npos) << out;
  EXPECT_NE(out.find("the dynamic loader: 300 B in 1 blocks"), std::string::npos) << out;
}

// heaptrack's temporary allocations: freed by their thread before it allocates
// again, counted beside the lifetime threshold's.
TEST(TextViewsLifetimes, HeaptracksTemporaryAllocations) {
  analysis::testing::Script s;
  s.thread(1, 0, 101, "worker");
  s.free(s.alloc(1000, 10, {0x1}), 2000);                 // A: freed at once
  const format::AllocId b = s.alloc(3000, 20, {0x1});
  const format::AllocId c = s.alloc(4000, 40, {0x1});
  s.free(b, 5000);                                        // B: C was allocated in between
  s.free(c, 6000);                                        // C: the thread's latest allocation
  const format::AllocId d = s.alloc(7000, 80, {0x1}, 1);  // D on the worker...
  s.free(d, 8000, 0);                                     // ... freed by thread 0: not its own
  s.end(10000);
  const std::string out = render_lifetimes(s.run(), LifetimeOptions{});
  EXPECT_NE(out.find("Freed before their thread's next allocation (heaptrack's \"temporary\"): 2 blocks, 50.0% of all; 50 B"),
            std::string::npos) << out;
  s.info.mode = format::Mode::Sampled;
  s.info.bytes_per_sample = 1000;
  EXPECT_NE(render_lifetimes(s.run(), LifetimeOptions{}).find("temporary\"): needs an --all trace"), std::string::npos);
}

// The rows' ranges never overlap: "< 1.00 µs" (freed in the allocating tick)
// was followed by "512 ns – 1.02 µs" for a lifetime of one tick.
TEST(TextViewsLifetimes, BucketRangesDoNotOverlap) {
  analysis::testing::Script s;
  s.free(s.alloc(5000, 16, {0x1}), 5000);   // < 1 µs
  s.free(s.alloc(6000, 16, {0x1}), 7000);   // 1 µs
  s.free(s.alloc(8000, 16, {0x1}), 11000);  // 3 µs
  s.end(20000);
  LifetimeOptions o;
  const std::string out = render_lifetimes(s.run(), o);
  EXPECT_EQ(out.find("512 ns"), std::string::npos) << out;
  EXPECT_NE(out.find("1.00 µs – 1.02 µs"), std::string::npos) << out;
  o.csv = true;
  const auto rows = lines(render_lifetimes(s.run(), o));
  uint64_t previous_max = 0;
  for (size_t i = 1; i < rows.size() && rows[i][0] != ','; ++i) {
    const uint64_t min = std::stoull(rows[i]), max = std::stoull(rows[i].substr(rows[i].find(',') + 1));
    EXPECT_GE(min, previous_max) << rows[i];
    EXPECT_LT(min, max) << rows[i];
    previous_max = max;
  }
}

TEST_F(TextViews, TimelineCsvAndChart) {
  const analysis::Model m = s.run();
  const std::string csv = timeline_csv(m);
  const auto l = lines(csv);
  ASSERT_EQ(l[0], "time_ns,live_bytes,live_max_bytes,live_min_bytes,allocated_bytes,freed_bytes,rss_bytes,markers");
  // 1 ns buckets over [0, 100]: 101 rows.
  ASSERT_EQ(l.size(), 102u);
  // At 50: a3 takes the heap to 6200, then a1's free to 5200; 1200 was before 50.
  EXPECT_EQ(l[1 + 50], "50,5200,6200,5200,5000,1000,,");
  EXPECT_EQ(l[1 + 45], "45,1200,1200,1200,0,0,,phase 2");
  EXPECT_EQ(l[1 + 95], "95,350,350,350,0,0,1048576,");
  EXPECT_EQ(l[1 + 100], "100,350,350,350,0,0,1048576,");

  const std::string chart = render_timeline(m, ChartSize{50, 8});
  EXPECT_NE(chart.find("▲ peak 6.05 KiB at 50 ns"), std::string::npos) << chart;
  EXPECT_NE(chart.find("1 phase 2 at 45 ns"), std::string::npos) << chart;
  // RSS (1 MiB) dwarfs the heap: its one sample (t = 95) is a dot on the top row,
  // in column 95 × 50 / 100 = 47.
  const auto rows = lines(chart);
  ASSERT_EQ(rows[1].substr(0, 12), "1.00 MiB ┤");
  EXPECT_EQ(rows[1], "1.00 MiB ┤" + std::string(47, ' ') + "•") << chart;
  EXPECT_NE(chart.find("At the end   350 B live"), std::string::npos);
  // An every-call trace: the legend does not call the heap "estimated".
  EXPECT_EQ(chart.find("estimated"), std::string::npos) << chart;
  EXPECT_NE(chart.find("█ live heap (exact)"), std::string::npos) << chart;
}

// A vector<string>::push_back that reallocates, as GCC 12 -O2 compiled it in
// bench/workloads/stl_deep.cc: the frames of the return address are the ones the
// finaliser stored for it (libdw's inline chain, innermost first, which
// `addr2line -i` prints too). _M_allocate is in the chain twice, at
// stl_vector.h:378 (its call to allocate) and :375 (its opening line).
TEST(TextViewsRealFrames, AFunctionInlinedIntoItselfIsOneFrame) {
  const std::string str = "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";
  const std::string alloc = "std::allocator<" + str + " >";
  const std::string vec = "std::vector<" + str + ", " + alloc + " >";
  const std::string bits = "/usr/include/c++/12/bits/";
  analysis::testing::Script s;
  s.symbols[0x5578] = {
      {"std::__new_allocator<" + str + " >::allocate(unsigned long, void const*)", bits + "new_allocator.h", 137, 48},
      {alloc + "::allocate(unsigned long)", bits + "allocator.h", 188, 40},
      {"std::allocator_traits<" + alloc + " >::allocate(" + alloc + "&, unsigned long)", bits + "alloc_traits.h",
       464, 28},
      {"std::_Vector_base<" + str + ", " + alloc + " >::_M_allocate(unsigned long)", bits + "stl_vector.h", 378, 33},
      {"std::_Vector_base<" + str + ", " + alloc + " >::_M_allocate(unsigned long)", bits + "stl_vector.h", 375, 7},
      {"void " + vec + "::_M_realloc_insert<" + str + " const&>(__gnu_cxx::__normal_iterator<" + str + "*, " + vec +
           " >, " + str + " const&)",
       bits + "vector.tcc", 453, 44}};
  s.symbols[0x6001] = {{vec + "::push_back(" + str + " const&)", bits + "stl_vector.h", 1287, 21},
                       {"evaluate", "stl_deep.cc", 64, 9}};
  s.alloc(1, 64, {0x5578, 0x6001});
  s.end(2);
  TopOptions o;
  o.frames = 0;
  o.all_frames = true;  // the library frames are what this checks
  const std::string out = render_top(s.run(), o);
  size_t copies = 0;
  for (size_t at = out.find("::_M_allocate("); at != std::string::npos; at = out.find("::_M_allocate(", at + 1)) {
    ++copies;
  }
  EXPECT_EQ(copies, 1u) << out;
  // where it calls allocate
  EXPECT_NE(out.find("← std::_Vector_base<…>::_M_allocate()  /usr/include/c++/12/bits/stl_vector.h:378 [inlined]"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("vector.tcc:453\n"), std::string::npos) << out;            // the real function
  // Grouped by line the two copies are distinct frames, each at its own line.
  analysis::QueryArgs by_line;
  by_line.grouping = analysis::Grouping::Line;
  const std::string lines_out = render_top(s.run(by_line), o);
  EXPECT_NE(lines_out.find("stl_vector.h:378 [inlined]"), std::string::npos) << lines_out;
  EXPECT_NE(lines_out.find("stl_vector.h:375 [inlined]"), std::string::npos) << lines_out;
}

TEST(TextChart, BarsReachThePeak) {
  analysis::testing::Script s;
  const auto a = s.alloc(0, 800, {0x1});
  s.alloc(50, 800, {0x1});  // 1600 live from 50 to 75
  s.free(a, 75);
  s.end(100);
  const auto rows = lines(render_timeline_chart(s.run().overview, ChartSize{8, 4}));
  // 8 columns of 12.5 ns; 4 rows of 400 B. Columns 4 and 5 hold the 1600 B
  // peak, the rest 800 B: half height, exactly two full rows.
  ASSERT_GE(rows.size(), 5u);
  EXPECT_EQ(rows[0], "1.56 KiB ┤    ██");
  EXPECT_EQ(rows[1], "         │    ██");
  EXPECT_EQ(rows[2], "   800 B ┤████████");
  EXPECT_EQ(rows[3], "         │████████");
  EXPECT_EQ(rows[4], "       0 └────────");
}

TEST_F(TextViews, HeapColumnsKeepThePeak) {
  const analysis::Model m = s.run();
  const std::vector<double> columns = heap_columns(m.overview, 10);
  ASSERT_EQ(columns.size(), 10u);
  EXPECT_EQ(*std::max_element(columns.begin(), columns.end()), 6200);
  EXPECT_EQ(columns[5], 6200);  // [50, 60)
  EXPECT_EQ(columns[8], 550);   // [80, 90): a5 allocated at 80
  EXPECT_EQ(columns[9], 350);   // [90, 100]: a2 is freed as the slice begins
}

TEST_F(TextViews, Diff) {
  analysis::testing::Script b;
  analysis::testing::worked_example(b);
  // B: make_buffer allocates 700 more, and parse's sites disappear from a focus.
  b.alloc(99, 700, {0xa2, 0xb2, 0xb1, 0xc1});
  DiffOptions o;
  o.csv = true;
  EXPECT_EQ(render_diff(s.run(), b.run(), o),
            "a_allocated_bytes,a_allocated_bytes_lo,a_allocated_bytes_hi,b_allocated_bytes,b_allocated_bytes_lo,"
            "b_allocated_bytes_hi,change_bytes,change_bytes_lo,change_bytes_hi,change_blocks,change_blocks_lo,"
            "change_blocks_hi,stack_innermost_first\n"
            "1300,1300,1300,2000,2000,2000,700,700,700,1,1,1,make_buffer;load;run;main\n");
  o.csv = false;
  const std::string out = render_diff(s.run(), b.run(), o);
  EXPECT_NE(out.find("Change in allocated bytes from A to B: +700 B"), std::string::npos) << out;
}

}  // namespace
}  // namespace memloupe::report
