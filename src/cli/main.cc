// memloupe: the command-line entry point. Dispatches to the sub-commands.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string_view>
#include <vector>

#include "cli/command_list.h"
#include "cli/commands.h"

namespace {

// The one place a bad command line becomes an exit status: every parser error
// (unknown option or command, a value out of range or of the wrong type) is
// kUsage with the "memloupe:" prefix; --help and --version print and exit 0.
// CLI11's own exit codes (104-109) are not part of memloupe's interface.
int parse_error_status(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
  std::string message = e.what();
  // With no command at all, or an unknown one, CLI11 says "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-' && app.get_subcommands().empty()) {
    message = fmt::format("unknown command '{}'", argv[1]);
  }
  std::fflush(stdout);
  fmt::print(stderr, "memloupe: {}\nRun with --help for more information.\n", message);
  return memloupe::cli::kUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"memloupe: a sampling memory profiler for native Linux programs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "memloupe 0.1.0");

  // Only the command argv[1] names, when it names one: building all of them
  // (their options, CLI11's validators) was 4.5 M instructions, ~1 ms of every
  // `memloupe run`. Its parse is the same alone: once the one command allowed
  // is given, CLI11 recognises no other. Else all: --help lists them, and a
  // mistyped command is told so.
  const auto named = [&](const memloupe::cli::NamedCommand& c) { return argc > 1 && std::string_view(argv[1]) == c.name; };
  const bool one = std::ranges::any_of(memloupe::cli::kCommands, named);
  std::vector<memloupe::cli::Command> commands;
  for (const memloupe::cli::NamedCommand& c : memloupe::cli::kCommands) {
    if (!one || named(c)) commands.push_back(c.add(app));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_error_status(app, e, argc, argv);
  }
  for (auto& command : commands) {
    if (command.sub->parsed()) return command.run();
  }
  return memloupe::cli::kUsage;
}
