// `memloupe dump TRACE`: every event as one line of text (docs/DUMP.md).
#include <iostream>
#include <string>

#include "cli/commands.h"
#include "cli/trace_input.h"
#include "reader/dump.h"

namespace memloupe::cli {

Command add_dump_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("dump", "Print every event of a trace, one line each");
  sub->add_option("trace", *path, "A memloupe trace or a memtrace CTF trace")->required();
  return {sub, [path] {
            int exit_code = kOk;
            auto reader = open_trace(*path, exit_code);
            if (!reader) return exit_code;
            reader::dump_trace(*reader, std::cout);
            return report_damage(*reader, *path);
          }};
}

}  // namespace memloupe::cli
