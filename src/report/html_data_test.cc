#include "report/html_data.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "report/html_json.h"
#include "support/test_profile.h"

namespace memloupe::report {
namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The sum of the numbers after every `"key":` in the JSON text.
size_t sum_of(const std::string& text, const std::string& key) {
  size_t total = 0;
  const std::string what = "\"" + key + "\":";
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    total += std::stoul(text.substr(at + what.size()));
  }
  return total;
}

TEST(HtmlData, SizeIsBoundedHoweverLargeTheTrace) {
  HtmlLimits limits;
  std::string json = html_data_json(testing::huge_profile(), limits);
  // docs/REPORT.md states 8 MB for the data of the largest page.
  EXPECT_LT(json.size(), 8u * 1000 * 1000);
  // Sites have their own entries (rows) while the bucket budget lasts: 100
  // buckets each here, counted twice as the profile is sampled; the rest merge into at most one entry per page node
  // (at most 2 x max_kept_nodes of them). Every site is in one entry or the other.
  const size_t own = count(json, "\"l\":[");
  EXPECT_EQ(own, limits.max_site_buckets / 200);
  std::printf("data of the largest page: %zu bytes\n", json.size());
  EXPECT_LE(count(json, "\"m\":"), 2 * limits.max_kept_nodes);
  EXPECT_EQ(own + sum_of(json, "m"), 8000u);
  EXPECT_LE(count(json, "\"marker "), limits.max_markers);
  EXPECT_GT(count(json, "[other]"), 0u);
}

TEST(HtmlData, DownsampledCurvesKeepTheirLastPoint) {
  // 100,000 points into at most 1,000: the highest per slot, and the last one,
  // so the RSS line reaches the end of the run.
  const Profile p = testing::huge_profile();
  const std::string json = html_data_json(p);
  for (const std::string key : {"heap", "rss"}) {
    const size_t begin = json.find("\"" + key + "\":[");
    ASSERT_NE(begin, std::string::npos) << key;
    const std::string curve = json.substr(begin, json.find(']', begin) - begin);
    EXPECT_LE(count(curve, ","), 2 * 1001u) << key;
    const std::string last = std::to_string(p.rss.back().time_ns) + "," +
                             std::to_string(static_cast<uint64_t>(p.rss.back().bytes));
    EXPECT_EQ(curve.substr(curve.size() - last.size()), last) << key;
  }
}

TEST(HtmlData, EverySiteIsARowUntilTheRowCap) {
  HtmlLimits limits;
  std::string json = html_data_json(testing::small_profile(), limits);
  EXPECT_EQ(count(json, "\"l\":["), 4u);
  EXPECT_EQ(count(json, "\"m\":"), 0u);
  limits.max_site_rows = 1;  // the largest site keeps its row; the others merge per node
  json = html_data_json(testing::small_profile(), limits);
  EXPECT_EQ(count(json, "\"l\":["), 1u);
  EXPECT_EQ(sum_of(json, "m"), 3u);
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
  // Nodes: the root, main, load_config, and the [other] under each kept one
  // that lost a child: 5 nodes of 5 numbers.
  const size_t begin = json.find("\"nodes\":[") + 9;
  const std::string nodes = json.substr(begin, json.find(']', begin) - begin);
  EXPECT_EQ(count(nodes, ",") + 1, 25u) << nodes;
  // Widget::Widget's and libfake's sites merge into main's [other] (node 3),
  // parse;token's into load_config's (node 4); every site still has its row,
  // named by its own frame.
  EXPECT_EQ(count(json, "{\"n\":3,"), 2u) << json;
  EXPECT_EQ(count(json, "{\"n\":4,"), 1u) << json;
  EXPECT_NE(json.find("\"Widget::Widget\""), std::string::npos);
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
