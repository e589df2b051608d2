// `memloupe summary TRACE`: command, duration, threads, exact call totals,
// totals, peak, leaks and the top sites (docs/ANALYSIS.md).
#include <memory>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/retention_note.h"
#include "cli/text_options.h"
#include "report/text_views.h"

namespace memloupe::cli {

Command add_summary_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    report::SummaryOptions summary;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "summary", "The trace at a glance: calls, allocated, peak heap, leaks and the top sites");
  add_view_options(sub, o->view);
  add_limit_option(sub, o->summary.top);
  add_frames_option(sub, o->summary.frames, o->summary.all_frames);
  add_output_flags(sub, o->summary.csv, o->summary.json, "Allocated, peak and leaked as CSV (with interval bounds)");
  add_full_names_flag(sub, o->summary.full_names);
  return {sub, [o] {
            o->summary.width = table_width();
            return print_view(o->view, [&](const analysis::Model& m) {
              return report::render_summary(m, o->summary) + retention_note(o->view.trace);
            });
          }};
}

}  // namespace memloupe::cli
