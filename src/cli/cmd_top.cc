// `memloupe top TRACE`: allocation sites ranked by allocated bytes, count, live
// bytes (at a time or at the peak), leaks...; or the callers/callees of a function.
#include <iostream>
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
            int exit_code = kOk;
            auto model = analyze(o->view, 0, exit_code);
            if (!model) return exit_code;
            const report::TopOptions t = top_options(o->rank);
            if (!o->callers.empty()) {
              std::cout << report::render_neighbours(*model, o->callers, true, t);
            } else if (!o->callees.empty()) {
              std::cout << report::render_neighbours(*model, o->callees, false, t);
            } else {
              std::cout << report::render_top(*model, t);
            }
            return exit_code;
          }};
}

}  // namespace memloupe::cli
