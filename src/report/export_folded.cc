#include "report/export_folded.h"

#include <cmath>
#include <map>

#include "report/frame_names.h"

namespace memloupe::report {

namespace {

double metric_value(const SiteValues& v, FoldedMetric metric) {
  switch (metric) {
    case FoldedMetric::Allocated: return v.allocated.bytes;
    case FoldedMetric::Live: return v.live.bytes;
    case FoldedMetric::Peak: return v.peak.bytes;
    case FoldedMetric::Leaked: return v.leaked.bytes;
    case FoldedMetric::Count: return v.allocated.objects;
  }
  return 0;
}

void append_escaped(std::string& out, const std::string& name) {
  for (char c : name) out.push_back(c == ';' ? ':' : c == '\n' || c == '\r' ? ' ' : c);
}

}  // namespace

bool parse_folded_metric(std::string_view text, FoldedMetric& out) {
  static constexpr std::pair<std::string_view, FoldedMetric> kNames[] = {
      {"allocated", FoldedMetric::Allocated}, {"live", FoldedMetric::Live},
      {"peak", FoldedMetric::Peak},           {"leaked", FoldedMetric::Leaked},
      {"count", FoldedMetric::Count}};
  for (auto [name, metric] : kNames) {
    if (name == text) {
      out = metric;
      return true;
    }
  }
  return false;
}

void write_folded(const Profile& profile, FoldedMetric metric, std::ostream& out) {
  std::map<std::string, double> lines;
  for (const Site& site : profile.sites) {
    double value = metric_value(site.values, metric);
    if (value <= 0) continue;
    std::string key;
    for (const std::string& name : stack_names_root_first(profile, site)) {
      if (!key.empty()) key.push_back(';');
      append_escaped(key, name);
    }
    lines[key] += value;
  }
  for (const auto& [stack, value] : lines) {
    long long rounded = std::llround(value);
    if (rounded > 0) out << stack << ' ' << rounded << '\n';
  }
}

}  // namespace memloupe::report
