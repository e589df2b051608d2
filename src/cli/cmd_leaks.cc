// `memloupe leaks TRACE`: blocks still live at exit, grouped by site.
#include <memory>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/text_options.h"
#include "report/text_views.h"

namespace memloupe::cli {

Command add_leaks_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    RankOptions rank;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("leaks", "Blocks never freed, grouped by allocation site");
  add_view_options(sub, o->view);
  add_rank_options(sub, o->rank, false);
  return {sub, [o] {
            o->view.args.grouping = *grouping(o->rank.group);
            return print_view(o->view,
                              [&](const analysis::Model& m) { return report::render_leaks(m, top_options(o->rank)); });
          }};
}

}  // namespace memloupe::cli
