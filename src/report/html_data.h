// The data the HTML report carries, aggregated and capped so that the page's
// size does not grow with the trace (docs/REPORT.md states the bound):
//
//  - the call tree of the sites' frames (root first), pruned to the kMaxKeptNodes
//    nodes that matter most: a node's score is the largest share it has of any
//    metric (allocated bytes, allocations, peak bytes, leaked bytes), and a site
//    whose own node was pruned is merged into an "[other]" child of its deepest
//    kept ancestor — so at most 2 x kMaxKeptNodes nodes and as many sites;
//  - per site (one distinct backtrace: a row of the page's site table), its
//    page node, its own frame's name, whole-selection totals and its non-empty
//    time buckets of allocated / freed / leaked bytes and objects (enough for
//    the page to recompute every metric for any range of buckets). Every site
//    has its own entry, largest first, until max_site_rows entries or
//    max_site_buckets bucket entries are used; the sites after that merge into
//    one entry per page node (which says how many it holds), so totals stay
//    exact. From a sampled trace each amount also carries the sampled blocks
//    and the variance its 95% interval is computed from (docs/REPORT.md);
//  - the heap and RSS curves, at most kMaxCurvePoints points each (max per slot,
//    so the peak survives) and the last point (so each curve reaches its end), at most kMaxMarkers markers, names cut to
//    kMaxNameBytes;
//  - the C++ types of the sites (docs/TYPES.md), at most max_types, each with
//    its whole-selection objects and bytes and its max_type_stacks largest
//    stacks (as page nodes).
#pragma once

#include <cstddef>
#include <string>

#include "analysis/index.h"
#include "report/profile.h"

namespace memloupe::report {

struct HtmlLimits {
  size_t max_kept_nodes = 400;
  size_t max_curve_points = 1000;
  size_t max_markers = 200;
  size_t max_name_bytes = 200;
  size_t max_types = 200;
  size_t max_type_stacks = 10;
  size_t max_site_rows = 50'000;
  size_t max_site_buckets = 100'000;  // non-empty (site, bucket) pairs; sampled ones count twice
};
// The page recomputes ranges from the Profile's buckets; the caller (the model
// adapter) asks for this many: the analysis index's count, so that `memloupe
// report` is answered from the index.
inline constexpr uint32_t kHtmlBuckets = analysis::kIndexSeriesBuckets;

// The report's data as one JSON object (see assets/data.js for its reader).
std::string html_data_json(const Profile& profile, const HtmlLimits& limits = {});

}  // namespace memloupe::report
