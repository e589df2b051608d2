#include "report/export_folded.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/test_profile.h"

namespace memloupe::report {
namespace {

std::string folded(const Profile& p, FoldedMetric metric) {
  std::ostringstream out;
  write_folded(p, metric, out);
  return out.str();
}

// Expectations are the site table of test_profile.cc, written out by hand:
// root first, inlined frames expanded, ';' in names replaced, sorted, zeros dropped.
TEST(Folded, AllocatedBytes) {
  EXPECT_EQ(folded(testing::small_profile(), FoldedMetric::Allocated),
            "main;[libfake.so+0x1000] 50\n"
            "main;load_config 5000\n"
            "main;load_config;parse:token 300\n"
            "main;make_widgets;Widget::Widget 1000\n");
}

TEST(Folded, OtherMetrics) {
  Profile p = testing::small_profile();
  EXPECT_EQ(folded(p, FoldedMetric::Peak),
            "main;load_config 5000\n"
            "main;make_widgets;Widget::Widget 1000\n");
  EXPECT_EQ(folded(p, FoldedMetric::Leaked),
            "main;load_config;parse:token 300\n"
            "main;make_widgets;Widget::Widget 200\n");
  EXPECT_EQ(folded(p, FoldedMetric::Live), folded(p, FoldedMetric::Leaked));
  EXPECT_EQ(folded(p, FoldedMetric::Count),
            "main;[libfake.so+0x1000] 1\n"
            "main;load_config 5\n"
            "main;load_config;parse:token 3\n"
            "main;make_widgets;Widget::Widget 10\n");
}

TEST(Folded, SitesNamingTheSameFunctionsAreMerged) {
  Profile p = testing::small_profile();
  // A second return address in load_config: a distinct site with the same names.
  p.locations.push_back({0x401250, MappingId{0}, {{"load_config", "prog.cc", 31, 0}}});
  Site extra = p.sites[1];
  extra.stack[0] = LocationId{static_cast<uint32_t>(p.locations.size() - 1)};
  extra.values.allocated = {700, 7};
  p.sites.push_back(extra);
  EXPECT_NE(folded(p, FoldedMetric::Allocated).find("main;load_config 5700\n"), std::string::npos);
}

TEST(Folded, MetricNames) {
  FoldedMetric m{};
  ASSERT_TRUE(parse_folded_metric("leaked", m));
  EXPECT_EQ(m, FoldedMetric::Leaked);
  EXPECT_FALSE(parse_folded_metric("bytes", m));
}

}  // namespace
}  // namespace memloupe::report
