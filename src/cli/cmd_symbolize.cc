// `memloupe symbolize TRACE [-o OUT] [--force]`: finalises a trace recorded
// without the launcher (MEMLOUPE_OUTPUT set by hand): resolves its addresses,
// appends the symbols section and compresses it. In place unless -o is given.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/finalize_report.h"
#include "cli/trace_input.h"

namespace memloupe::cli {
namespace {

struct SymbolizeOptions {
  std::string trace;
  std::string output;
  bool force = false;
  bool no_index = false;
  bool index = false;
  bool no_types = false;
};

int symbolize(const SymbolizeOptions& o) {
  {
    // Missing file / not a trace: the messages and exit codes all commands use.
    int exit_code = kOk;
    auto reader = open_trace(o.trace, exit_code);
    if (!reader) return exit_code;
    if (!reader->info().source_format.empty()) {
      fmt::print(stderr, "memloupe: {} is a {} trace; it carries its own locations\n", o.trace,
                 reader->info().source_format);
      return kNotATrace;
    }
  }
  finalize::FinalizeOptions options;
  options.resymbolize = o.force;
  return finalize_and_report(o.trace, o.output.empty() ? o.trace : o.output, options,
                             o.no_index ? analysis::IndexWhen::Never
                             : o.index  ? analysis::IndexWhen::Always
                                        : analysis::IndexWhen::IfItPays,
                             !o.no_types);
}

}  // namespace

Command add_symbolize_command(CLI::App& app) {
  auto o = std::make_shared<SymbolizeOptions>();
  CLI::App* sub = app.add_subcommand(
      "symbolize", "Resolve a trace's addresses to functions and lines and embed them (finalise it)");
  sub->add_option("trace", o->trace, "A trace written by the preload library")->required();
  sub->add_option("-o,--output", o->output, "Write the result here instead of replacing TRACE");
  sub->add_flag("--force", o->force, "Symbolise again a trace that already has symbols");
  sub->add_flag("--no-index", o->no_index,
                "Write no analysis index (summary and report then read all the events each time)");
  sub->add_flag("--index", o->index, index_flag_help())->excludes("--no-index");
  sub->add_flag("--no-types", o->no_types, "Infer no C++ types of allocation sites (`memloupe types` then has none)");
  return {sub, [o] { return symbolize(*o); }};
}

}  // namespace memloupe::cli
