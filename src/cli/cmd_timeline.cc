// `memloupe timeline TRACE`: the estimated live heap and RSS over time, as a
// terminal chart or CSV.
#include <algorithm>
#include <memory>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/text_options.h"
#include "report/text_views.h"

namespace memloupe::cli {

Command add_timeline_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    size_t width = 0;
    size_t height = 14;
    bool csv = false;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("timeline", "The live heap and RSS over time, peak and markers");
  add_view_options(sub, o->view);
  // The chart needs 8 columns and 2 rows (text_chart.cc); 0 columns = the terminal's width.
  sub->add_option("--width", o->width, "Chart columns (default: the terminal's width)")
      ->check(CLI::Range(size_t{8}, size_t{10000}) | CLI::Range(size_t{0}, size_t{0}));
  sub->add_option("--height", o->height, "Chart rows")->check(CLI::Range(size_t{2}, size_t{1000}))->capture_default_str();
  add_output_flags(sub, o->csv, o->json, "One CSV line per time bucket instead of a chart");
  return {sub, [o] {
            return print_view(o->view, [&](const analysis::Model& m) {
              if (o->csv) return report::timeline_csv(m);
              if (o->json) return report::timeline_json(m);
              // Leave room for the value labels on the left.
              const size_t width = o->width ? o->width : std::max<size_t>(20, terminal_width() - 12);
              return report::render_timeline(m, report::ChartSize{width, o->height});
            });
          }};
}

}  // namespace memloupe::cli
