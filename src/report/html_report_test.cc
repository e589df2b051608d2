#include "report/html_report.h"

#include <gtest/gtest.h>

#include <sstream>

#include "report/html_assets.h"
#include "support/test_profile.h"

namespace memloupe::report {
namespace {

TEST(HtmlReport, OneSelfContainedFile) {
  std::ostringstream out;
  write_html_report(testing::small_profile(), out);
  std::string html = out.str();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* placeholder : {"@TITLE@", "@CSS@", "@DATA@", "@JS@"}) {
    EXPECT_EQ(html.find(placeholder), std::string::npos) << placeholder;
  }
  EXPECT_NE(html.find(std::string(kReportJs.substr(0, 200))), std::string::npos);
  EXPECT_NE(html.find("<title>memloupe: /usr/bin/prog</title>"), std::string::npos);
  // Nothing is fetched: no external scripts, styles, images or URLs.
  for (const char* external : {"src=", "href=", "http:", "https:", "@import", "url("}) {
    EXPECT_EQ(html.find(external), std::string::npos) << external;
  }
}

TEST(HtmlReport, AssetsCannotEndTheirElementsEarly) {
  EXPECT_EQ(kReportJs.find("</"), std::string_view::npos);
  EXPECT_EQ(kReportCss.find("</"), std::string_view::npos);
}

}  // namespace
}  // namespace memloupe::report
