// The programmable-sampling API end to end: examples/live_by_site builds a
// live-size-by-site table from trackers alone (memloupe_set_trackers), with a
// depth set at run time (memloupe_set_depth), under the real preload library.
#include <gtest/gtest.h>

#include <regex>

#include "recorder_use_fixture.h"

namespace memloupe::testing {
namespace {

std::string built(const std::string& name) { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/" + name; }

TEST_F(RecorderUse, TrackersBuildTheLiveSizeOfEverySite) {
  const Environment env{{{"LD_PRELOAD", preload_library()},
                         {"MEMLOUPE_OUTPUT", dir_ / "t.trace"},
                         {"MEMLOUPE_MODE", "all"}},
                        {}};
  const Finished f = run_process({built("live_by_site")}, dir_.path(), "", env);
  ASSERT_EQ(f.status, 0) << f.err;
  // --all mode: every block tracked with its size. 60 of site_small's 100
  // blocks of 1000 bytes, site_large's 10 of 50,000; site_temporary freed all.
  EXPECT_TRUE(std::regex_search(f.out, std::regex(R"(\n +60000 +60 +0x)"))) << f.out;
  EXPECT_TRUE(std::regex_search(f.out, std::regex(R"(\n +500000 +10 +0x)"))) << f.out;
  EXPECT_EQ(std::count(f.out.begin(), f.out.end(), '\n'), 4) << f.out;  // header, 2 sites, depth
  EXPECT_NE(f.out.find("deepest backtrace: 4 frames\n"), std::string::npos) << f.out;
  // The trace's backtraces follow the depth set at run time.
  const TraceSummary t = summarize(dir_ / "t.trace");
  EXPECT_GE(t.allocs_between(50000, 50000), 10u);
}

TEST_F(Launch, TheExampleSaysItNeedsTheLibrary) {
  const Finished f = run_process({built("live_by_site")}, dir_.path());
  EXPECT_EQ(f.status, 2);
  EXPECT_NE(f.err.find("run me under memloupe"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace memloupe::testing
