#include "report/html_data.h"

#include <gtest/gtest.h>

#include "report/html_json.h"
#include "support/test_profile.h"

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

// The number a key holds in the JSON text, parsed back as the page's reader would
// see its digits (JSON numbers are decimal text; precision is the writer's job).
std::string json_number(const std::string& json, const std::string& key) {
  const size_t at = json.find("\"" + key + "\":");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 3;
  return json.substr(begin, json.find_first_of(",}]", begin) - begin);
}

TEST(HtmlData, TimestampsAndCountsRoundTripExactly) {
  Profile p = testing::small_profile();
  // A wall-clock start in 2026 in nanoseconds: 19 digits, beyond %.6g (which
  // moved it by up to 80 minutes) and beyond a double's 2^53.
  p.info.start_wall_ns = 1'795'000'123'456'789'012ull;
  p.duration_ns = 9'007'199'254'740'993ull;  // 2^53 + 1
  p.events = 10'800'001;
  const std::string json = html_data_json(p);
  EXPECT_EQ(std::stoull(json_number(json, "start_wall_ns")), p.info.start_wall_ns) << json_number(json, "start_wall_ns");
  EXPECT_EQ(std::stoull(json_number(json, "duration_ns")), p.duration_ns);
  EXPECT_EQ(std::stoull(json_number(json, "events")), p.events);
}

TEST(JsonWriter, WholeNumbersOfAnySizeAreExact) {
  JsonWriter json;
  json.begin_array().number(1.5e17).number(123456789012.0).number(0.125).number(2.0 / 3).end_array();
  EXPECT_EQ(json.text(), "[150000000000000000,123456789012,0.125,0.666667]");
}

}  // namespace
}  // namespace memloupe::report
