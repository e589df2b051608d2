// Options shared by the terminal views (top, leaks, diff): what to rank by,
// how sites are grouped, how much to show.
//
//   --by allocated|count|live|peak|leaked|freed|temporary   (count = allocated blocks)
//   --blocks        rank by block count instead of bytes
//   --depth N       identify a site by its innermost N frames (0 = whole stack)
//   --group function|line|address
//   -n/--limit N, --frames N, --min-count N, --csv, --full-names
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "analysis/query.h"
#include "analysis/sites.h"
#include "report/text_views.h"

namespace memloupe::cli {

struct RankOptions {
  std::string by = "allocated";
  bool blocks = false;
  uint32_t depth = 0;
  std::string group = "function";
  size_t limit = 20;
  size_t frames = report::kDefaultFrames;
  bool all_frames = false;
  double min_count = 0;
  bool csv = false;
  bool json = false;
  bool full_names = false;
};

// `with_by`: whether --by/--blocks make sense for the command (not for leaks).
void add_rank_options(CLI::App* sub, RankOptions& options, bool with_by);

// The two counts every text view shares, under one name each (docs/ANALYSIS.md):
//   -n/--limit N   rows per table (0: all); `--top` is a hidden alias (summary
//                  and lifetimes used to call it that)
//   --frames N     backtrace lines per site (0: all), report::kDefaultFrames
// Both refuse negative numbers (CLI11 would otherwise wrap -1 to SIZE_MAX).
void add_limit_option(CLI::App* sub, size_t& limit);
//   --all-frames   start backtraces at the innermost frame, not at the first
//                  outside the allocator and standard library (analysis::first_own_frame)
void add_frames_option(CLI::App* sub, size_t& frames, bool& all_frames);

//   --depth N      identify a site by its innermost N frames (0: the whole stack)
void add_depth_option(CLI::App* sub, uint32_t& depth);

// --csv and --json (machine-readable output; one excludes the other).
void add_output_flags(CLI::App* sub, bool& csv, bool& json, const std::string& csv_help);

// --full-names: function names whole rather than shortened (every text view has it).
void add_full_names_flag(CLI::App* sub, bool& full_names);

// The view's options as given, tables cut to table_width(). For top, leaks
// (whose view ranks by leaked bytes whatever the key) and diff.
report::TopOptions top_options(const RankOptions& options);

// "count" is allocated blocks; the rest are metric names (analysis::metric_name).
std::optional<analysis::SortKey> sort_key(const RankOptions& options);
std::optional<analysis::Grouping> grouping(const std::string& name);

// Terminal columns available to a chart on stdout (COLUMNS, the tty's width, else 80).
size_t terminal_width();
// The width tables are cut to: the terminal's when stdout is one, else 0 (never
// cut, so piped output keeps whole function names).
size_t table_width();

}  // namespace memloupe::cli
