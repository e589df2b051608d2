#include "report/html_data.h"

#include <gtest/gtest.h>

#include "report/test_profile.h"

namespace memloupe::report {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(HtmlData, SizeIsBoundedHoweverLargeTheTrace) {
  HtmlLimits limits;
  std::string json = html_data_json(testing::huge_profile(), limits);
  // docs/REPORT.md states 6 MB for the data of the largest page.
  EXPECT_LT(json.size(), 6u * 1000 * 1000);
  // At most 2 x max_kept_nodes nodes besides the root, as many sites; capped curves and markers.
  EXPECT_LE(count(json, "{\"n\":"), 2 * limits.max_kept_nodes);
  EXPECT_LE(count(json, "\"marker "), limits.max_markers);
  EXPECT_GT(count(json, "[other]"), 0u);
}

TEST(HtmlData, SmallTraceKeepsEverySite) {
  std::string json = html_data_json(testing::small_profile());
  for (const char* name : {"main", "make_widgets", "Widget::Widget", "load_config", "parse;token",
                           "[libfake.so+0x1000]", "prog.cc:30"}) {
    EXPECT_NE(json.find(std::string("\"") + name + "\""), std::string::npos) << name;
  }
  EXPECT_EQ(count(json, "{\"n\":"), 4u);
  EXPECT_EQ(json.find("[other]"), std::string::npos);
  // The peak and the 4 buckets of 1 ms.
  EXPECT_NE(json.find("\"peak\":[1500000,6000]"), std::string::npos);
  EXPECT_NE(json.find("\"bucket_ns\":1000000,\"buckets\":4"), std::string::npos);
}

TEST(HtmlData, PrunedSitesMergeIntoOtherUnderTheirKeptAncestor) {
  Profile p = testing::small_profile();
  HtmlLimits limits;
  limits.max_kept_nodes = 2;  // main and load_config: the two largest nodes
  std::string json = html_data_json(p, limits);
  EXPECT_NE(json.find("\"load_config\""), std::string::npos);
  EXPECT_EQ(json.find("\"Widget::Widget\""), std::string::npos);
  // Widget::Widget's and libfake's sites merge into main's [other]; parse;token's into load_config's.
  EXPECT_EQ(count(json, "{\"n\":"), 3u);
}

TEST(HtmlData, NodesCarryTheShortNameNextToTheFullOne) {
  Profile p = testing::small_profile();
  p.locations[0].frames[0].function = "std::vector<int, std::allocator<int> >::push_back(int const&)";
  const std::string json = html_data_json(p);
  // The page labels nodes with the C++ rule's short name and keeps the full one for tooltips.
  EXPECT_NE(json.find("\"std::vector\\u003cint, std::allocator\\u003cint> >::push_back(int const&)\""),
            std::string::npos) << json;
  EXPECT_NE(json.find("\"std::vector\\u003c…>::push_back()\""), std::string::npos) << json;
}

TEST(HtmlData, TextCannotCloseTheScriptElement) {
  Profile p = testing::small_profile();
  p.locations[0].frames[0].function = "evil</script><script>alert(1)</script>";
  std::string json = html_data_json(p);
  EXPECT_EQ(json.find('<'), std::string::npos);
  EXPECT_NE(json.find("evil\\u003c/script>"), std::string::npos);
}

}  // namespace
}  // namespace memloupe::report
