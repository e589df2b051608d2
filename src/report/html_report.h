// The interactive HTML report: one self-contained file (style, script and data
// inline; no network, no libraries) with the trace's info, the heap timeline
// (drag a range to re-filter everything below it), a flame graph (metric
// selector, click to zoom, search) and the top-sites tables.
#pragma once

#include <ostream>

#include "report/html_data.h"
#include "report/profile.h"

namespace memloupe::report {

void write_html_report(const Profile& profile, std::ostream& out, const HtmlLimits& limits = {});

}  // namespace memloupe::report
