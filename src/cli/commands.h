// Each memloupe sub-command lives in its own cmd_*.cc and registers itself here.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace memloupe::cli {

// Exit codes shared by every command.
enum ExitCode : int {
  kOk = 0,
  kUsage = 1,         // bad command line (CLI11 also uses 1..)
  kNoInput = 2,       // missing or unreadable file
  kNotATrace = 3,     // not a trace, or a newer format version
  kDamaged = 4,       // the trace is damaged or truncated; what was readable was used
  kFailed = 5,        // anything else (could not write output, program could not start)
};

// A command adds its subcommand to `app` and returns it with the function that
// runs it once the command line is parsed.
using RunFn = std::function<int()>;
struct Command {
  CLI::App* sub;
  RunFn run;
};
using AddCommandFn = Command (*)(CLI::App& app);

}  // namespace memloupe::cli
