#include "report/html_report.h"

#include <string>
#include <string_view>

#include "report/html_assets.h"

namespace memloupe::report {

namespace {

std::string escape_html(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

}  // namespace

void write_html_report(const Profile& profile, std::ostream& out, const HtmlLimits& limits,
                       const std::string& retention) {
  // The substitutions are made on the template only, in one left-to-right scan,
  // so text inside the data or the script can never be taken for a placeholder.
  std::string title = "memloupe: " + escape_html(profile.info.executable.substr(0, 200));
  const std::pair<std::string_view, std::string> fills[] = {
      {"@TITLE@", title},
      {"@CSS@", std::string(kReportCss)},
      {"@DATA@", html_data_json(profile, limits)},
      {"@RETENTION@", retention.empty() ? std::string("null") : retention},
      {"@JS@", std::string(kReportJs)},
  };
  std::string_view rest = kReportHtml;
  for (const auto& [placeholder, value] : fills) {
    size_t at = rest.find(placeholder);
    if (at == std::string_view::npos) continue;  // a template without it (checked by the tests)
    out << rest.substr(0, at) << value;
    rest.remove_prefix(at + placeholder.size());
  }
  out << rest;
}

}  // namespace memloupe::report
