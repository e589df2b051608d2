// The list of sub-commands, in the order `memloupe --help` shows them.
// One line per command; each is defined in its cmd_NAME.cc.
#pragma once

#include "cli/commands.h"

namespace memloupe::cli {

#define MEMLOUPE_COMMANDS(X) \
  X(run)                     \
  X(snapshot)                \
  X(attach)                  \
  X(detach)                  \
  X(live)                    \
  X(symbolize)               \
  X(info)                    \
  X(summary)                 \
  X(top)                     \
  X(timeline)                \
  X(leaks)                   \
  X(retention)               \
  X(lifetimes)               \
  X(types)                   \
  X(diff)                    \
  X(report)                  \
  X(export)                  \
  X(replay)                  \
  X(dump)

#define MEMLOUPE_DECLARE(name) Command add_##name##_command(CLI::App& app);
MEMLOUPE_COMMANDS(MEMLOUPE_DECLARE)
#undef MEMLOUPE_DECLARE

struct NamedCommand {
  const char* name;  // as its add_subcommand names it
  AddCommandFn add;
};

inline constexpr NamedCommand kCommands[] = {
#define MEMLOUPE_ENTRY(name) {#name, &add_##name##_command},
    MEMLOUPE_COMMANDS(MEMLOUPE_ENTRY)
#undef MEMLOUPE_ENTRY
};

}  // namespace memloupe::cli
