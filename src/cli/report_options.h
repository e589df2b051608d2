// The time-selection and filter options of the views that draw from the
// analysis model (report, export), and the analysis run they lead to.
//
//   --at T | --between T1 T2 | --at-peak | --at-end    the time selection
//   --live | --allocated | --freed                      what the window tests
//   --min-size/--max-size, --min-lifetime/--max-lifetime, --thread, --focus, --hide
// Times: "1.5s", "200ms", "30%", "peak", "end"; sizes: "4KiB", "1M".
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "analysis/model.h"

namespace memloupe::cli {

struct ViewOptions {
  std::string trace;
  analysis::QueryArgs args;
  std::vector<std::string> between;
  bool live = false, allocated = false, freed = false;
  std::optional<uint32_t> thread;
  bool no_index = false;  // --no-index: read the events even if the trace's analysis index answers
};

// Adds the trace argument and the options above to `sub`.
void add_view_options(CLI::App* sub, ViewOptions& options);

// Opens the trace (exit codes of trace_input.h), then runs both analysis passes
// with a progress bar on a terminal stderr. On failure prints why, sets
// `exit_code` and returns nothing.
std::optional<analysis::Model> analyze(ViewOptions& options, uint32_t series_buckets, int& exit_code);

// The terminal views' whole run: analyze(), then render(model) on stdout.
// Returns the exit code (kDamaged after printing what a damaged trace held).
int print_view(ViewOptions& options, const std::function<std::string(const analysis::Model&)>& render);

}  // namespace memloupe::cli
