#include "report/export_massif.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/test_profile.h"

namespace memloupe::report {
namespace {

std::string massif(const Profile& p) {
  std::ostringstream out;
  write_massif(p, out);
  return out.str();
}

std::vector<std::string> lines_with(const std::string& text, const std::string& prefix) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) == 0) out.push_back(line.substr(prefix.size()));
  }
  return out;
}

// Snapshot times and heap sizes follow the bucket table of test_profile.cc:
// t=0 empty, then bucket ends 1,2,3,4 ms with 500, 6000, 700, 500 bytes, and the
// peak (6000 at 1.5 ms, printed as 1 ms) between the first two.
TEST(Massif, SnapshotsFollowTheBuckets) {
  std::string text = massif(testing::small_profile());
  EXPECT_EQ(text.rfind("desc: ", 0), 0u);
  EXPECT_NE(text.find("\ncmd: /usr/bin/prog --fast\n"), std::string::npos);
  EXPECT_NE(text.find("\ntime_unit: ms\n"), std::string::npos);
  EXPECT_EQ(lines_with(text, "time="), (std::vector<std::string>{"0", "1", "1", "2", "3", "4"}));
  EXPECT_EQ(lines_with(text, "mem_heap_B="),
            (std::vector<std::string>{"0", "500", "6000", "6000", "700", "500"}));
  EXPECT_EQ(lines_with(text, "heap_tree="),
            (std::vector<std::string>{"empty", "empty", "peak", "empty", "empty", "detailed"}));
}

TEST(Massif, PeakTreeBranchesFromTheAllocationPointToTheCallers) {
  std::string text = massif(testing::small_profile());
  std::string peak_tree =
      "heap_tree=peak\n"
      "n2: 6000 (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n"
      " n1: 5000 0x401200: load_config (prog.cc:30)\n"
      "  n0: 5000 0x401010: main (prog.cc:50)\n"
      " n1: 1000 0x401100: Widget::Widget (widget.h:7)\n"
      "  n1: 1000 0x401100: make_widgets (prog.cc:20)\n"
      "   n0: 1000 0x401010: main (prog.cc:50)\n";
  EXPECT_NE(text.find(peak_tree), std::string::npos) << text;
}

TEST(Massif, SmallChildrenCollapseBelowTheThreshold) {
  Profile p = testing::small_profile();
  // 150 sites of 1 byte each under main's caller slot: each is < 1% of the peak.
  for (int i = 0; i < 150; ++i) {
    p.locations.push_back({0x402000u + i, MappingId{0}, {{"tiny" + std::to_string(i), "t.cc", 1, 0}}});
    Site s{{LocationId{static_cast<uint32_t>(p.locations.size() - 1)}}, {}, {}};
    s.values.peak = {1, 1};
    p.sites.push_back(s);
  }
  std::string text = massif(p);
  EXPECT_NE(text.find("n3: 6150 (heap allocation functions)"), std::string::npos);
  EXPECT_NE(text.find(" n0: 150 in 150 places, all below massif's threshold (1.00%)\n"), std::string::npos);
}

TEST(Massif, AtMostOneHundredSnapshots) {
  Profile p = testing::small_profile();
  p.bucket_count = 1000;
  p.bucket_ns = 4'000;
  for (Site& s : p.sites) s.buckets.clear();
  p.sites[0].buckets = {{999, {1000, 10}, {}, {}}};
  std::string text = massif(p);
  EXPECT_LE(lines_with(text, "snapshot=").size(), 100u);
  EXPECT_EQ(lines_with(text, "mem_heap_B=").back(), "1000");
  // With the report's 100 buckets: time 0, 98 bucket ends and the peak.
  p.bucket_count = 100;
  p.bucket_ns = 40'000;
  p.sites[0].buckets = {{99, {1000, 10}, {}, {}}};
  EXPECT_EQ(lines_with(massif(p), "snapshot=").size(), 100u);
}

}  // namespace
}  // namespace memloupe::report
