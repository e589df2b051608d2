// `memloupe diff A B`: sites that grew or shrank from trace A to trace B, with
// the same selection and filters applied to both.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/text_options.h"
#include "report/text_views.h"

namespace memloupe::cli {

Command add_diff_command(CLI::App& app) {
  struct Options {
    ViewOptions a;
    std::string b_trace;
    RankOptions rank;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("diff", "Sites that grew or shrank between two traces (A, then B)");
  add_view_options(sub, o->a);
  sub->add_option("trace_b", o->b_trace, "The trace to compare with the first")->required();
  add_rank_options(sub, o->rank, true);
  return {sub, [o] {
            o->a.args.grouping = *grouping(o->rank.group);
            ViewOptions b = o->a;
            b.trace = o->b_trace;
            int exit_a = kOk, exit_b = kOk;
            auto model_a = analyze(o->a, 0, exit_a);
            if (!model_a) return exit_a;
            auto model_b = analyze(b, 0, exit_b);
            if (!model_b) return exit_b;
            std::cout << report::render_diff(*model_a, *model_b, top_options(o->rank));
            return exit_a != kOk ? exit_a : exit_b;
          }};
}

}  // namespace memloupe::cli
