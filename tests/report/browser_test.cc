// The HTML report in real headless Chromium (driven by browser_check.mjs over
// the DevTools protocol): no console errors, the flame graph and the timeline
// are drawn, and dragging a time range on the timeline changes the numbers.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "analysis/estimate.h"
#include "report/html_report.h"
#include "support/test_profile.h"
#include "tool_runner.h"

namespace memloupe::report {
namespace {

std::string chromium() {
  const char* env = std::getenv("MEMLOUPE_CHROMIUM");
  return env ? env : "/usr/bin/chromium";
}

// Runs the browser check on `html`; skips the test if there is no browser.
std::map<std::string, std::string> open_in_chromium(const std::string& html, const std::string& extra = "") {
  std::string script = std::string(MEMLOUPE_SOURCE_DIR) + "/tests/report/browser_check.mjs";
  testing::Run r = testing::run("node '" + script + "' '" + html + "' --chromium '" + chromium() + "' " + extra);
  EXPECT_EQ(r.status, 0) << r.out;
  return testing::key_values(r.out);
}

#define SKIP_WITHOUT_BROWSER()                                                                \
  do {                                                                                        \
    if (!testing::executable(chromium())) GTEST_SKIP() << "no chromium at " << chromium();   \
    if (!testing::on_path("node")) GTEST_SKIP() << "node is not installed (Debian nodejs)"; \
  } while (0)

std::string write_report(const Profile& p, const std::string& name) {
  std::string path = testing::scratch_dir(name) + "/report.html";
  std::ofstream out(path);
  write_html_report(p, out);
  return path;
}

// No script error, the page ready, the flame graph and the timeline inked.
void expect_drawn(std::map<std::string, std::string>& kv) {
  EXPECT_EQ(kv["errors"], "0") << kv["error"];
  EXPECT_EQ(kv["before.ready"], "true");
  EXPECT_GT(std::stol(kv["flame_inked"]), 1000);
  EXPECT_GT(std::stol(kv["timeline_inked"]), 1000);
}

TEST(Browser, SmallReportRendersAndARangeRefiltersIt) {
  SKIP_WITHOUT_BROWSER();
  auto kv = open_in_chromium(write_report(testing::small_profile(), "browser-small"));
  EXPECT_EQ(kv["errors"], "0") << kv["error"];
  EXPECT_EQ(kv["before.ready"], "true");
  EXPECT_GT(std::stol(kv["flame_inked"]), 1000);
  EXPECT_GT(std::stol(kv["timeline_inked"]), 1000);
  // Whole trace (test_profile.cc's table): 6350 B in 19 blocks, peak 6000, leaked 500.
  EXPECT_EQ(kv["before.allocated"], "6350");
  EXPECT_EQ(kv["before.allocations"], "19");
  EXPECT_EQ(kv["before.peak"], "6000");
  EXPECT_EQ(kv["before.leaked"], "500");
  EXPECT_EQ(kv["before.flame_rects"], "7");  // root + 6 frames
  EXPECT_EQ(kv["before.shown_allocated"], "6.20 KiB");
  // The drag covers 30%..62% of 4 ms: buckets 1..2. Allocated there: S0 500 + S1 5000
  // in 10 blocks; leaked from them: S0's 200; the heap's highest bucket end: 6000.
  EXPECT_EQ(kv["after.range"], "1,2");
  EXPECT_EQ(kv["after.allocated"], "5500");
  EXPECT_EQ(kv["after.allocations"], "10");
  EXPECT_EQ(kv["after.leaked"], "200");
  EXPECT_EQ(kv["after.peak"], "6000");
  EXPECT_EQ(kv["after.shown_allocated"], "5.37 KiB");
  EXPECT_EQ(kv["after.top_allocated_rows"], "2");
  EXPECT_EQ(kv["after.flame_rects"], "5");  // parse;token and [libfake.so] drop out
  // Clearing the range restores the whole-trace numbers.
  EXPECT_EQ(kv["cleared.allocated"], "6350");
  EXPECT_EQ(kv["search"].rfind("matched: ", 0), 0u);
}

TEST(Browser, LargestReportStillOpens) {
  SKIP_WITHOUT_BROWSER();
  std::string path = write_report(testing::huge_profile(), "browser-huge");
  auto kv = open_in_chromium(path);
  expect_drawn(kv);
  EXPECT_NE(kv["before.allocated"], kv["after.allocated"]);
}

// The page's intervals come from util.js, a port of analysis/estimate.cc: the
// same Garwood bounds for every sample count, small (bisection) and large
// (Wilson–Hilferty), as the C++ the CLI prints.
TEST(Browser, PagesPoissonIntervalsAreTheAnalysisOnes) {
  SKIP_WITHOUT_BROWSER();
  std::vector<uint64_t> ks;
  for (uint64_t k = 0; k <= 60; ++k) ks.push_back(k);
  for (uint64_t k : {100ull, 333ull, 1000ull, 9999ull, 10'000ull, 10'001ull, 123'456ull, 50'000'000ull}) ks.push_back(k);
  std::string list;
  for (uint64_t k : ks) list += (list.empty() ? "" : ",") + std::to_string(k);
  auto kv = open_in_chromium(write_report(testing::small_profile(), "browser-poisson"),
                             "--eval '[" + list + "].map((k) => window.memloupe.poisson95(k))'");
  ASSERT_EQ(kv["errors"], "0") << kv["error"];
  const std::string& page = kv["eval"];  // [[lo,hi],[lo,hi],...]
  size_t at = 0;
  for (uint64_t k : ks) {
    at = page.find('[', at + 1);
    ASSERT_NE(at, std::string::npos) << k << ": " << page;
    char* end = nullptr;
    const double lo = std::strtod(page.c_str() + at + 1, &end);
    const double hi = std::strtod(end + 1, nullptr);
    const analysis::PoissonInterval cc = analysis::poisson_interval_95(k);
    EXPECT_NEAR(lo, cc.lo, 1e-9 * std::max(1.0, cc.lo)) << "k=" << k;
    EXPECT_NEAR(hi, cc.hi, 1e-9 * std::max(1.0, cc.hi)) << "k=" << k;
  }
}

TEST(Browser, PageWithTheMostSiteRowsStillOpensAndPages) {
  SKIP_WITHOUT_BROWSER();
  std::string path = write_report(testing::many_sites_profile(), "browser-many-sites");
  auto kv = open_in_chromium(path);
  expect_drawn(kv);
  // 50,000 rows of their own, the rest merged per flame-graph node; 50 a page.
  EXPECT_GT(std::stol(kv["table.rows"]), 50'000);
  EXPECT_EQ(kv["table.shown"], "50");
  EXPECT_EQ(kv["next_page.shown"], "50");
  EXPECT_EQ(kv["sorted.ordered"], "true");
  EXPECT_GT(std::stol(kv["inverted.flame_rects"]), 10);
  EXPECT_NE(kv["focus.zoom"], "0");
  EXPECT_EQ(kv["focus.zoom_name"], kv["focus.expected"]);
  std::printf("page of %s site rows: loaded and drawn in %s ms\n", kv["table.rows"].c_str(), kv["load_ms"].c_str());
}

}  // namespace
}  // namespace memloupe::report
