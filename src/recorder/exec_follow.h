// Which process images record, when the traced process forks and execs
// (docs/RECORDER.md, "Children: fork and exec").
//
// The rule, by default (MEMLOUPE_FOLLOW_EXEC=1, MEMLOUPE_FOLLOW_FORK=0): the
// launched process and every image it execs in turn record, each into its own
// file (PATH, then PATH.1, PATH.2, ...: an exec'd image keeps the pid, so %p
// does not tell them apart). A wrapper that ends with `exec python3 ...` (pyenv's
// shims, `env`, most launcher scripts) is thus followed into the program it
// starts. Forked children and whatever they exec stay untraced.
//
// How an image knows which it is: the traced process keeps MEMLOUPE_OUTPUT in
// its environment and adds MEMLOUPE_SESSION_PID=its pid. An image that finds
// MEMLOUPE_SESSION_PID equal to its own pid is the traced process after an exec;
// one that finds another pid descends from it through a fork (or vfork,
// posix_spawn: no fork handler runs there, so the environment is the only
// reliable carrier) and passes through.
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/config.h"

namespace memloupe::recorder {

enum class ImageRole : uint8_t {
  First,        // no traced process before it: record, truncating the file
  ExecOfTraced, // the traced process, exec'd: record, never overwriting
  Untraced,     // a descendant through an unfollowed fork: pass through
};

ImageRole image_role(const Config& c, uint32_t pid) noexcept;

// From the library's constructor, once the session is known to run: leaves the
// environment so that the images this process execs follow the rule above.
void prepare_environment_for_exec(const Config& c, uint32_t pid) noexcept;

// The environment an exec passes on, made to follow the rule above. The
// recorder keeps its verdict in `environ` (setenv), but a program may exec
// with an environment of its own: bash defines its own setenv (the library's
// call at start reaches bash's, before bash has variables) and runs its
// commands with the variables it imported, where MEMLOUPE_SESSION_PID is
// still what `memloupe run` started it with (empty), or absent under a bare
// LD_PRELOAD. The exec'd image, finding no session, took itself for the
// launched program and truncated the trace while it was being written: every
// command of a traced shell script did, and `memloupe run` read a damaged
// trace or died of SIGBUS on its shrunken mapping (until 2026-11-26). So each
// exec's (and posix_spawn's) `envp` is given the verdict here: the session's
// pid (`session_pid`: the traced process's, which a forked child keeps; 0 in
// an image that does not record, whose own MEMLOUPE_SESSION_PID is passed on),
// and without follow-exec no MEMLOUPE_OUTPUT. An environment without MEMLOUPE_OUTPUT (`env
// -i`) is left as it is, and so is every one under follow-fork (every image
// records, none overwrites).
//
// Returns `envp` itself when it follows the rule already, else a copy in
// `room`, which must hold exec_environment_room(envp) pointers; `entry` holds
// the MEMLOUPE_SESSION_PID entry the copy points to (kSessionEntry bytes).
// Allocates nothing: the exec hooks run in vfork children too, whose memory
// is their parent's.
inline constexpr size_t kSessionEntry = 48;
size_t exec_environment_room(char* const envp[]) noexcept;
char* const* exec_environment(const Config& c, uint32_t session_pid, char* const envp[], char** room,
                              char* entry) noexcept;

}  // namespace memloupe::recorder
