// The HTML report's retention view data: per heap snapshot, the roots by
// retained bytes, each with its dominator tree cut to a bounded size, and the
// leak kinds. The page (assets/retention.js) shows the roots and expands a
// root into its tree.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "report/text_retention.h"

namespace memloupe::report {

// The page's size does not grow with the heap: at most `roots` roots per
// snapshot, `depth` levels and `breadth` children under each, `nodes` tree
// nodes per snapshot in all (the largest first; the rest of a vertex's
// children are summed into one "more" line), names cut to `name_bytes`.
struct RetentionHtmlLimits {
  size_t roots = 50;
  size_t depth = 8;
  size_t breadth = 10;
  size_t nodes = 4000;
  size_t name_bytes = 200;
};

// {"snapshots": [...]}, or "null" when there is none (see assets/retention.js).
std::string retention_html_json(std::span<const SnapshotReport> reports, const RetentionHtmlLimits& limits = {});

}  // namespace memloupe::report
