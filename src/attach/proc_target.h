// What /proc says about a process memloupe is asked to attach to, and the checks
// made before touching it (each failure a sentence naming the pid and what to do).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/expected.h"

namespace memloupe::attach {

struct Mapping {
  uint64_t start = 0, end = 0, offset = 0;
  bool executable = false;
  std::string path;
};

std::vector<Mapping> read_maps(pid_t pid);

// The load address of the module whose path satisfies `match` (its mapping at
// file offset 0), with that path.
struct ModuleBase {
  uint64_t base = 0;
  std::string path;
};
template <class Match>
std::optional<ModuleBase> find_module(const std::vector<Mapping>& maps, Match match) {
  for (const Mapping& m : maps)
    if (m.offset == 0 && !m.path.empty() && match(m.path)) return ModuleBase{m.start, m.path};
  return std::nullopt;
}

// Whether `path` is the C library (libc.so.6, libc-2.31.so, musl's libc.so).
bool is_libc(const std::string& path);

// A path in the target's mount namespace, as this process can open it.
std::string path_in(pid_t pid, const std::string& path);

// The checks that need no ptrace: the process exists and is ours to trace, is
// not traced or stopped already, is a 64-bit x86-64 program, and is dynamically
// linked. An Error says which and what to change.
Expected<bool> check_target(pid_t pid);

// Why PTRACE_SEIZE failed with `err`, with what to change (Yama, capabilities).
std::string explain_ptrace_error(pid_t pid, int err);

// The threads of `pid`, the main thread first.
std::vector<pid_t> threads_of(pid_t pid);

}  // namespace memloupe::attach
