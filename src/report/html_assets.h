// The HTML report's template, style sheet and script (src/report/assets/),
// compiled into the binary by embed_assets.cmake.
#pragma once

#include <string_view>

namespace memloupe::report {

extern const std::string_view kReportHtml;  // with @TITLE@, @CSS@, @DATA@, @JS@ placeholders
extern const std::string_view kReportCss;
extern const std::string_view kReportJs;

}  // namespace memloupe::report
