// Site tables shared by summary, top and leaks: rank, the metric's bytes and
// blocks (with intervals when sampled), share of the total, and the site's
// backtrace (innermost frame in the row, callers under it).
#pragma once

#include <string>
#include <vector>

#include "analysis/model.h"
#include "analysis/sites.h"
#include "report/text_table.h"

namespace memloupe::report {

// "parse  src/parse.cc:12" (+ " [inlined]"); the function alone without a file.
// The function's name is shortened (short_function_name) unless `full_name`.
std::string frame_label(const analysis::Frame& frame, bool full_name);
// A function's name as the text views print it.
std::string function_label(const std::string& function, bool full_name);

// An estimate as a cell: readable text; CSV value, low, high.
Cell bytes_cell(const analysis::Estimator& e, const analysis::Count& c);
Cell objects_cell(const analysis::Estimator& e, const analysis::Count& c);
std::vector<std::string> estimate_csv_headers(const std::string& name);  // name, name_lo, name_hi

// A site's backtrace as a table row shows it: the row's frame, then "← caller"
// lines, `frames` lines in all (0: every one), then "← … N more". Unless
// `all_frames`, it starts at `own` (analysis::first_own_frame: the innermost
// frame outside the allocator and the standard library) and says how many
// library frames it skipped. `labels` are innermost first.
struct StackLines {
  std::string leaf;
  std::vector<std::string> notes;
};
StackLines stack_lines(const std::vector<std::string>& labels, size_t own, size_t frames, bool all_frames);

struct SiteTableOptions {
  analysis::SortKey key;
  size_t limit = 20;        // rows; 0 = all
  size_t frames = 6;        // backtrace lines per site, the row's included; 0 = all
  double min_count = 0;     // drop sites with fewer (estimated) blocks for the key's metric
  bool full_names = false;
  bool all_frames = false;  // start at the innermost frame, library code included
};

// Sorts `sites` by the key and tabulates the first `limit`.
TextTable site_table(const analysis::Model& model, std::vector<analysis::Site> sites,
                     const SiteTableOptions& options);

// "allocated bytes", "leaked blocks", ...: what a SortKey measures, for headings.
std::string key_title(analysis::SortKey key);

}  // namespace memloupe::report
