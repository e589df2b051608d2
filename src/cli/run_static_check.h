// `memloupe run`: refusing, before running it, a program the preload library
// cannot be loaded into.
//
// LD_PRELOAD is honoured by the dynamic loader, and a statically linked
// program (static or static-pie) has none: it has no PT_INTERP program header.
// Run anyway, it would run untraced and leave no trace, and the user would learn
// why only from a "no trace was written" afterwards. A `#!` script is judged by
// its interpreter (one level, as the kernel does).
#pragma once

#include <optional>
#include <string>

namespace memloupe::cli {

// The program as execvp would find it (PATH searched for a name without a
// slash); nothing if it is not found (launching then reports that).
std::optional<std::string> find_program(const std::string& name);

// The file that makes `path` statically linked (itself, or a script's
// interpreter), or nothing: dynamically linked, not ELF, or unreadable (then
// running it says what is wrong).
std::optional<std::string> static_executable(const std::string& path);

}  // namespace memloupe::cli
