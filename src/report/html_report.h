// The interactive HTML report: one self-contained file (style, script and data
// inline; no network, no libraries) with the trace's info, the heap timeline
// (drag a range to re-filter everything below it), a flame graph (top-down or
// inverted; metric selector, click to zoom, search), the complete site table
// (sortable; a row's click focuses the flame graph) and, when the trace holds
// heap snapshots, the retention view. Figures from a sampled trace carry their
// 95% intervals.
#pragma once

#include <ostream>
#include <string>

#include "report/html_data.h"
#include "report/profile.h"

namespace memloupe::report {

// `retention`: the retention view's data (retention_html.h), or empty when the
// trace holds no heap snapshot (the view stays hidden).
void write_html_report(const Profile& profile, std::ostream& out, const HtmlLimits& limits = {},
                       const std::string& retention = {});

}  // namespace memloupe::report
