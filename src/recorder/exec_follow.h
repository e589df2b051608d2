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

}  // namespace memloupe::recorder
