// The views of `memloupe retention`: per snapshot, the roots by retained bytes
// with the biggest blocks each retains, memcheck's leak kinds, live and lost
// blocks by allocation site (render_retention); the dominator tree
// (render_retention_tree); who holds a block, an address or a site's blocks
// (render_retention_paths). The JSON is retention_json.h.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "report/retention_names.h"
#include "retention/heap_graph.h"
#include "retention/retention.h"

namespace memloupe::report {

struct RetentionOptions {
  size_t roots = 20;    // roots listed (0: all that hold anything)
  size_t blocks = 5;    // biggest retained blocks under each root
  size_t sites = 10;    // rows of the by-site tables (0: all)
  size_t frames = 4;    // backtrace lines per site (0: all)
  size_t depth = 4;     // --tree: levels below each root
  size_t breadth = 5;   // --tree: children shown per vertex
  size_t paths = 10;    // --paths: roots shown
  size_t width = 0;     // cut table lines to this many columns (0: never)
};

// One snapshot, analysed and named; `number` counts from 1, of `count`.
struct SnapshotReport {
  const retention::HeapSnapshot& snapshot;
  const retention::Retention& retention;
  const RetentionNames& names;
  size_t number = 1;
  size_t count = 1;
};

std::string render_retention(const SnapshotReport& report, const RetentionOptions& options);
std::string render_retention_tree(const SnapshotReport& report, const RetentionOptions& options);

// What --paths asks about: an allocation id (decimal, as `dump` and the JSON
// show it), an address inside a block ("0x…"), or else a site: every block one
// of whose allocation frames has a function containing the text.
struct PathTarget {
  std::string description;
  std::vector<uint32_t> blocks;
};
PathTarget find_path_target(const SnapshotReport& report, const std::string& spec);
std::string render_retention_paths(const SnapshotReport& report, const PathTarget& target,
                                   const RetentionOptions& options);

// A block as the views show it: "64 B at 0x55d0c0 (alloc 12)".
std::string block_label(const retention::HeapSnapshot& snapshot, uint32_t block);
// "128 B in 3 blocks".
std::string amount_text(const retention::Amount& amount);

// The live blocks of one allocation site (RetentionNames::kUnknownSite: those
// whose Alloc the trace lacks), with their bytes per leak kind.
struct SiteRetention {
  uint32_t site = RetentionNames::kUnknownSite;
  retention::Amount live;
  retention::LeakSummary kinds;
};
// Every site with a live block, the most live bytes first.
std::vector<SiteRetention> retention_by_site(const SnapshotReport& report);

// The live blocks of one type (an index into RetentionNames::types()): bytes,
// blocks, and the objects in them (elements of buffers).
struct TypeRetention {
  uint32_t type = 0;
  retention::Amount live;
  uint64_t objects = 0;
};
// Every type with a live block, the most live bytes first.
std::vector<TypeRetention> retention_by_type(const SnapshotReport& report);

}  // namespace memloupe::report
