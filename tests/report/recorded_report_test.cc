// The HTML report of a real recorded trace in real headless Chromium: a test
// program (programs/report_prog.cc: 70-odd allocation sites, mmaps, ~0.45 s)
// recorded by `memloupe run` with the real preload library, `memloupe report`
// on the trace, and browser_check.mjs driving the page with the mouse. Every
// view must render with data: the flame graph, the timeline (heap, RSS to the
// end of the run, the mapped series), the complete and sortable site table, a
// row click focusing the flame graph, the inverted flame graph; and from a
// sampled trace, the page's intervals must be the CLI's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "tool_runner.h"

namespace memloupe::report {
namespace {

using testing::run;

std::string chromium() {
  const char* env = std::getenv("MEMLOUPE_CHROMIUM");
  return env ? env : "/usr/bin/chromium";
}
std::string bin(const std::string& name) { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/" + name; }
std::string quote(const std::string& s) { return "'" + s + "'"; }

class RecordedReport : public ::testing::Test {
 protected:
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    if (!testing::executable(chromium())) GTEST_SKIP() << "no chromium at " << chromium() << " (Debian package chromium)";
    if (!testing::on_path("node")) GTEST_SKIP() << "node is not installed (Debian package nodejs)";
  }

  // Records the test program with `run_options`, writes its report, opens it in
  // Chromium; the browser check's key=value lines.
  std::map<std::string, std::string> record_and_open(const std::string& name, const std::string& run_options) {
    dir_ = testing::scratch_dir(name);
    trace_ = dir_ + "/t.trace";
    testing::Run r = run("MEMLOUPE_SEED=7 " + quote(bin("memloupe")) + " run " + run_options + " -o " + quote(trace_) +
                         " -- " + quote(bin("report_prog")) + " 2>/dev/null");
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.out, "report_prog ok\n");
    const std::string html = dir_ + "/report.html";
    EXPECT_EQ(run(quote(bin("memloupe")) + " report " + quote(trace_) + " -o " + quote(html) + " 2>/dev/null").status, 0);
    const std::string script = std::string(MEMLOUPE_SOURCE_DIR) + "/tests/report/browser_check.mjs";
    testing::Run check = run("node " + quote(script) + " " + quote(html) + " --chromium " + quote(chromium()));
    EXPECT_EQ(check.status, 0) << check.out;
    return testing::key_values(check.out);
  }

  std::string dir_, trace_;
};

TEST_F(RecordedReport, EveryViewRendersWithData) {
  auto kv = record_and_open("recorded-all", "--all");
  ASSERT_EQ(kv["errors"], "0") << kv["error"];
  ASSERT_EQ(kv["before.ready"], "true");

  // Flame graph: drawn, with the program's frames.
  EXPECT_GT(std::stol(kv["flame_inked"]), 1000);
  const long flame_rects = std::stol(kv["before.flame_rects"]);
  EXPECT_GT(flame_rects, 60);  // 60 allocate_at_site<N> paths and more

  // Timeline: heap, RSS and mapped memory drawn; the RSS curve reaches the end
  // of the run (the recorder samples RSS at exit; the report keeps the last point).
  EXPECT_GT(std::stol(kv["timeline_inked"]), 1000);
  EXPECT_GE(std::stol(kv["timeline.rss"]), 5);
  EXPECT_GT(std::stol(kv["timeline.mapped"]), 2);  // map_arenas's 6 mmaps, 4 unmapped
  const double duration = std::stod(kv["timeline.duration_ns"]);
  EXPECT_GE(std::stod(kv["timeline.rss_last_ns"]), duration - 5e6);

  // The site table is complete: as many rows as `memloupe top -n 0` has sites,
  // more than one page of 50 (the second page holds the rest).
  testing::Run top = run(quote(bin("memloupe")) + " top -n 0 --csv " + quote(trace_) + " 2>/dev/null");
  ASSERT_EQ(top.status, 0);
  long cli_sites = -1;  // lines minus the header
  for (char c : top.out) cli_sites += c == '\n';
  EXPECT_GT(cli_sites, 60);
  EXPECT_EQ(kv["table.rows"], std::to_string(cli_sites));
  EXPECT_EQ(kv["table.shown"], "50");
  EXPECT_EQ(kv["next_page.shown"], std::to_string(cli_sites - 50));
  // Largest allocator first: map_arenas's 6 x 4 MiB.
  EXPECT_EQ(kv["table.first"].rfind("map_arenas", 0), 0u) << kv["table.first"];
  // Sorted by a click on "leaked": descending, map_arenas's 2 mappings never unmapped first.
  EXPECT_EQ(kv["sorted.sort"], "3");
  EXPECT_EQ(kv["sorted.ordered"], "true");
  EXPECT_EQ(kv["sorted.first_leaked"], std::to_string(2 * (4 << 20)));

  // A row click focuses the flame graph on that site: zoomed to the row's own
  // frame, fewer frames drawn, the row marked.
  EXPECT_NE(kv["focus.zoom"], "0");
  EXPECT_FALSE(kv["focus.expected"].empty());
  EXPECT_EQ(kv["focus.zoom_name"], kv["focus.expected"]);
  EXPECT_LT(std::stol(kv["focus.flame_rects"]), flame_rects);
  EXPECT_EQ(kv["focus.row_marked"], "1");
  EXPECT_GT(std::stol(kv["focus_ink"]), 1000);

  // The inverted toggle (clicked): the allocating frames at the top. The
  // widest is the CLI's largest site grouped by the innermost frame alone
  // (top --depth 1 --all-frames; top-down, _start is the widest).
  EXPECT_EQ(kv["inverted.on"], "true");
  EXPECT_GT(std::stol(kv["inverted.flame_rects"]), 60);
  EXPECT_GT(std::stol(kv["inverted_ink"]), 1000);
  testing::Run innermost =
      run(quote(bin("memloupe")) + " top --depth 1 --all-frames --full-names -n 1 --csv " + quote(trace_) + " 2>/dev/null");
  ASSERT_EQ(innermost.status, 0);
  // Line 2, after the 8 numeric columns: the frame's name (which may hold commas).
  size_t at = innermost.out.find('\n');
  for (int column = 0; column < 8 && at != std::string::npos; ++column) at = innermost.out.find(',', at + 1);
  ASSERT_NE(at, std::string::npos) << innermost.out;
  const std::string widest = innermost.out.substr(at + 1, innermost.out.find('\n', at) - at - 1);
  EXPECT_EQ(kv["inverted.top"], widest);
  EXPECT_NE(kv["inverted.top"], "_start");
  EXPECT_EQ(kv["inverted_focus.inverted"], "true");
  EXPECT_NE(kv["inverted_focus.zoom"], "0");
  EXPECT_EQ(kv["inverted_focus.zoom_name"], kv["inverted_focus.expected"]);
  EXPECT_EQ(kv["back.on"], "false");
  EXPECT_EQ(kv["back.zoom"], "0");

  // Exact trace: no intervals.
  EXPECT_EQ(kv["before.shown_allocated_ci"], "");
  EXPECT_EQ(kv["intervals.allocated.bytes_lo"], kv["intervals.allocated.bytes"]);
}

// One figure of `summary --json`: "measure":NAME's KEY.
double cli_figure(const std::string& json, const std::string& measure, const std::string& key) {
  const size_t at = json.find("\"measure\":\"" + measure + "\"");
  if (at == std::string::npos) return NAN;
  const size_t end = json.find('}', at);
  const size_t k = json.find("\"" + key + "\":", at);
  if (k == std::string::npos || k > end) return NAN;
  const char* value = json.c_str() + k + key.size() + 3;
  return *value == 'n' ? NAN : std::strtod(value, nullptr);  // null: no bound
}

TEST_F(RecordedReport, SampledFiguresShowTheCliIntervals) {
  auto kv = record_and_open("recorded-sampled", "--every 64KiB");
  ASSERT_EQ(kv["errors"], "0") << kv["error"];
  EXPECT_GT(std::stol(kv["flame_inked"]), 1000);
  EXPECT_NE(kv["before.shown_allocated_ci"].find('['), std::string::npos) << kv["before.shown_allocated_ci"];
  testing::Run summary = run(quote(bin("memloupe")) + " summary --json " + quote(trace_) + " 2>/dev/null");
  ASSERT_EQ(summary.status, 0);
  // The page computes its intervals in JavaScript (util.js, a port of
  // analysis/estimate.cc): the same numbers as the CLI's, to rounding.
  for (const char* measure : {"allocated", "peak", "leaked"}) {
    for (const char* key : {"bytes", "bytes_lo", "bytes_hi", "blocks", "blocks_lo"}) {
      const double cli = cli_figure(summary.out, measure, key);
      const std::string page = kv[std::string("intervals.") + measure + "." + key];
      ASSERT_FALSE(page.empty()) << measure << "." << key;
      EXPECT_NEAR(std::stod(page), cli, std::max(1.0, std::fabs(cli) * 1e-6)) << measure << "." << key;
    }
    const double cli_hi = cli_figure(summary.out, measure, "blocks_hi");
    const std::string page_hi = kv[std::string("intervals.") + measure + ".blocks_hi"];
    if (std::isnan(cli_hi)) {
      EXPECT_EQ(page_hi, "null") << measure;  // no upper bound known: both say so
    } else {
      EXPECT_NEAR(std::stod(page_hi), cli_hi, std::max(1.0, cli_hi * 1e-6)) << measure;
    }
  }
}

}  // namespace
}  // namespace memloupe::report
