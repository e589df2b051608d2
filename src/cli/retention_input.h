// Heap snapshots read, analysed and named: what `retention` and `report` show.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "analysis/alloc_stacks.h"
#include "report/retention_names.h"
#include "report/text_retention.h"
#include "retention/retention.h"
#include "retention/snapshot_load.h"
#include "types/type_table.h"

namespace memloupe::cli {

struct RetentionInput {
  retention::SnapshotSet set;
  analysis::AllocStacks stacks;
  types::TypeTable types;  // the trace's types table, for the blocks by type
  // Deques: the reports point into them.
  std::deque<retention::Retention> analyses;
  std::deque<report::RetentionNames> names;
  std::vector<report::SnapshotReport> reports;  // one per chosen snapshot, in order
};

// Analyses the snapshots `chosen` (indices into set.snapshots) and names their
// blocks' allocation sites from what load_snapshots gathered (no read of the
// trace), and their types from `types`.
std::unique_ptr<RetentionInput> analyse_snapshots(retention::SnapshotSet set, const std::vector<size_t>& chosen,
                                                  const report::SiteStyle& style, types::TypeTable types = {});

// The HTML report's retention data for `trace` (retention_html.h): empty when
// it holds no snapshot. Damage in the snapshots is printed and sets
// `exit_code` to kDamaged; the snapshots that could be read are used.
std::string retention_html(const std::string& trace, int& exit_code);

// load_snapshots and the trace's types table; a damaged types table is added
// to the set's damage (its entries before the damage are used).
retention::SnapshotSet load_retention(const std::string& trace, types::TypeTable& types);

}  // namespace memloupe::cli
