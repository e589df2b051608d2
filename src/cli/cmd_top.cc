// `memloupe top TRACE`: allocation sites ranked by allocated bytes, count, live
// bytes (at a time or at the peak), leaks...; or the callers/callees of a function.
#include <memory>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/text_options.h"
#include "report/text_views.h"

namespace memloupe::cli {

Command add_top_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    RankOptions rank;
    std::string callers, callees;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("top", "Allocation sites ranked by bytes or blocks");
  add_view_options(sub, o->view);
  add_rank_options(sub, o->rank, true);
  auto* callers = sub->add_option("--callers", o->callers, "Show who calls functions containing FUNC");
  auto* callees = sub->add_option("--callees", o->callees, "Show what functions containing FUNC call");
  callers->excludes(callees);
  return {sub, [o] {
            o->view.args.grouping = *grouping(o->rank.group);
            const report::TopOptions t = top_options(o->rank);
            return print_view(o->view, [&](const analysis::Model& m) {
              if (!o->callers.empty()) return report::render_neighbours(m, o->callers, true, t);
              if (!o->callees.empty()) return report::render_neighbours(m, o->callees, false, t);
              return report::render_top(m, t);
            });
          }};
}

}  // namespace memloupe::cli
