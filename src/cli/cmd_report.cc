// `memloupe report TRACE -o report.html`: the interactive, self-contained HTML
// report (docs/REPORT.md).
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/retention_input.h"
#include "report/html_report.h"
#include "report/profile_from_model.h"
#include "types/type_table.h"

namespace memloupe::cli {

Command add_report_command(CLI::App& app) {
  struct Options {
    ViewOptions view;
    std::string output = "memloupe-report.html";
    bool retention = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "report", "Write an interactive HTML report (flame graph, timeline, tables) in one file");
  add_view_options(sub, o->view);
  sub->add_option("-o,--output", o->output, "The HTML file to write")->capture_default_str();
  // The retention panel is always there when the trace holds snapshots: a
  // finalised trace names their blocks in the snapshots' annex, with no pass
  // over the events. The flag that made it opt-in is kept, doing nothing, so
  // that scripts written for it still run.
  sub->add_flag("--retention", o->retention, "Kept for scripts: the retention panel is always shown now")
      ->group("");
  return {sub, [o] {
            int exit_code = kOk;
            auto model = analyze(o->view, report::kHtmlBuckets, exit_code);
            if (!model) return exit_code;
            const std::string retention = retention_html(o->view.trace, exit_code);
            std::ofstream out(o->output, std::ios::binary);
            const types::LoadedTypes types = types::load_types_file(o->view.trace);
            if (out) report::write_html_report(report::profile_from_model(*model, &types.table), out, {}, retention);
            out.close();
            if (!out) {
              std::cerr << "memloupe: cannot write '" << o->output << "'\n";
              return static_cast<int>(kFailed);
            }
            std::cerr << "memloupe: wrote " << o->output << '\n';
            return exit_code;
          }};
}

}  // namespace memloupe::cli
