// memloupe: the command-line entry point. Dispatches to the sub-commands.
#include <vector>

#include "cli/command_list.h"
#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"memloupe: a sampling memory profiler for native Linux programs"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "memloupe 0.1.0");

  std::vector<memloupe::cli::Command> commands;
  for (memloupe::cli::AddCommandFn add : memloupe::cli::kCommands) commands.push_back(add(app));
  CLI11_PARSE(app, argc, argv);
  for (auto& command : commands) {
    if (command.sub->parsed()) return command.run();
  }
  return memloupe::cli::kUsage;
}
