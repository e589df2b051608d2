// The live view's renderings from a hand-made state.
#include "cli/live_view.h"

#include <gtest/gtest.h>

namespace memloupe::cli {
namespace {

TEST(LiveView, SparklineScalesToItsMaximumAndKeepsTheLastValues) {
  const std::vector<double> values{0, 1, 2, 4, 8};
  EXPECT_EQ(sparkline(values, 10), "▁▁▂▄█");
  EXPECT_EQ(sparkline(values, 2), "▄█");  // scaled to the values shown
  EXPECT_EQ(sparkline(std::vector<double>{0, 0}, 5), "▁▁");
  EXPECT_EQ(sparkline({}, 5), "");
}

LiveState sample_state() {
  LiveState s;
  s.command = "/bin/server";
  s.pid = 42;
  s.time_ns = 2'500'000'000;
  s.heap = 3 << 20;
  s.rss = 10 << 20;
  s.heap_series = {1 << 20, 2 << 20, 3 << 20};
  s.rss_series = {10 << 20};
  s.sites = {{"a", "grow  server.cc:10", 2 << 20, 5 << 20, 1 << 20},
             {"b", "churn  server.cc:20", 1 << 20, 50 << 20, -(2 << 20)}};
  s.threads = {{0, "main", 1 << 20, 5 << 20}, {1, "worker", 2 << 20, 50 << 20}};
  return s;
}

TEST(LiveView, ScreenSortsByTheChosenKey) {
  const LiveState s = sample_state();
  LiveScreen screen;
  std::string out = render_live_screen(s, screen);
  EXPECT_NE(out.find("pid 42 /bin/server"), std::string::npos) << out;
  EXPECT_NE(out.find("top sites by live bytes in all threads"), std::string::npos) << out;
  EXPECT_LT(out.find("grow"), out.find("churn")) << out;
  EXPECT_NE(out.find("+1.00 MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("-2.00 MiB"), std::string::npos) << out;
  EXPECT_NE(out.find("threads (2)"), std::string::npos) << out;

  screen.sort = LiveSort::Change;  // by size of the change, either way
  screen.thread = 1;
  out = render_live_screen(s, screen);
  EXPECT_NE(out.find("top sites by change in thread 1"), std::string::npos) << out;
  EXPECT_LT(out.find("churn"), out.find("grow")) << out;
  screen.sort = LiveSort::Allocated;
  out = render_live_screen(s, screen);
  EXPECT_LT(out.find("churn"), out.find("grow")) << out;
}

TEST(LiveView, LineNamesTheTopSiteByLiveBytes) {
  LiveState s = sample_state();
  EXPECT_EQ(render_live_line(s), "2.500 s heap 3.00 MiB rss 10.0 MiB threads 2 top grow  server.cc:10 (2.00 MiB, +1.00 MiB)\n");
  s.ended = true;
  s.sites.clear();
  EXPECT_EQ(render_live_line(s), "2.500 s heap 3.00 MiB rss 10.0 MiB threads 2 top - (trace ended)\n");
}

}  // namespace
}  // namespace memloupe::cli
