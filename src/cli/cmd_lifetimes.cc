// `memloupe lifetimes TRACE`: a histogram of block lifetimes, and the sites of
// temporary allocations (freed by their own thread almost at once).
#include <memory>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/text_options.h"
#include "report/text_views.h"

namespace memloupe::cli {

Command add_lifetimes_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    report::LifetimeOptions lifetimes;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("lifetimes", "How long blocks live; temporary allocations by site");
  add_view_options(sub, o->view);
  sub->add_option("--temporary", o->view.args.temporary,
                  "A block freed by its own thread within this time is temporary")
      ->capture_default_str();
  add_limit_option(sub, o->lifetimes.top);
  add_frames_option(sub, o->lifetimes.frames, o->lifetimes.all_frames);
  add_output_flags(sub, o->lifetimes.csv, o->lifetimes.json, "The histogram as CSV");
  add_full_names_flag(sub, o->lifetimes.full_names);
  return {sub, [o] {
            o->lifetimes.width = table_width();
            return print_view(o->view,
                              [&](const analysis::Model& m) { return report::render_lifetimes(m, o->lifetimes); });
          }};
}

}  // namespace memloupe::cli
