// The terminal views of the analysis model, one per command (summary, top,
// timeline, leaks, lifetimes, diff). Each returns the text to print, so tests
// check exactly what a user sees; `csv` variants return machine output.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/model.h"
#include "analysis/sites.h"
#include "report/text_chart.h"

namespace memloupe::report {

// In every option set: `width` cuts table lines to this many columns (0: never);
// `full_names` prints function names whole instead of short_function_name's
// "std::vector<…>::push_back()" (CSV output always has them whole).
// Backtrace lines per site, the same in every view (`--frames`).
inline constexpr size_t kDefaultFrames = 6;

struct SummaryOptions {
  size_t top = 10;     // sites per table
  size_t frames = kDefaultFrames;
  bool all_frames = false;  // backtraces from the innermost frame, library code included
  size_t width = 0;
  bool full_names = false;
  bool csv = false;   // the figures (allocated, peak, leaked) as CSV
  bool json = false;  // everything as one JSON object
};
std::string render_summary(const analysis::Model& model, const SummaryOptions& options);

struct TopOptions {
  analysis::SortKey key;
  uint32_t depth = 0;      // frames that identify a site; 0 = the whole stack
  size_t limit = 20;
  size_t frames = kDefaultFrames;
  bool all_frames = false;
  double min_count = 0;
  bool csv = false;
  bool json = false;  // the table's rows as a JSON array (TextTable::json)
  size_t width = 0;
  bool full_names = false;
};
std::string render_top(const analysis::Model& model, const TopOptions& options);
// The frames just outside (callers) or inside (callees) every occurrence of a function.
std::string render_neighbours(const analysis::Model& model, const std::string& function, bool callers,
                              const TopOptions& options);

std::string render_timeline(const analysis::Model& model, ChartSize size);
// One line per heap bucket: start time, live (end/max/min), allocated, freed,
// the latest RSS sample, markers in the bucket.
std::string timeline_csv(const analysis::Model& model);
// The same buckets as a JSON array of objects, with the peak, RSS peak and markers.
std::string timeline_json(const analysis::Model& model);

std::string render_leaks(const analysis::Model& model, const TopOptions& options);

struct LifetimeOptions {
  size_t top = 10;
  size_t frames = kDefaultFrames;
  bool all_frames = false;
  bool csv = false;
  bool json = false;
  size_t width = 0;
  bool full_names = false;
};
std::string render_lifetimes(const analysis::Model& model, const LifetimeOptions& options);

// The choices of `top`, applied to both traces; min_count drops the sites with
// fewer blocks in both.
using DiffOptions = TopOptions;
std::string render_diff(const analysis::Model& a, const analysis::Model& b, const DiffOptions& options);

// Lines describing the trace and the selection (shared headers of the views).
std::string describe_trace(const analysis::Model& model);
std::string describe_selection(const analysis::Model& model);

}  // namespace memloupe::report
