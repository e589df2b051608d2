// Loading the attach library into a running process and starting or ending its
// recording there (docs/ATTACH.md).
#pragma once

#include <sys/types.h>

#include <string>

#include "format/expected.h"

namespace memloupe::attach {

// dlopen(library, RTLD_NOW) on a thread of `pid` stopped at a safe point, then
// memloupe_attach_begin(config) there. `library` is an absolute path the target
// can open; `config` is "MEMLOUPE_NAME=value" lines (recorder/config.h).
Expected<bool> start_recording(pid_t pid, const std::string& library, const std::string& config);

// memloupe_attach_end() in `pid`: GOT entries put back, the trace ended and
// closed. The library stays loaded, inert.
Expected<bool> stop_recording(pid_t pid, const std::string& library);

}  // namespace memloupe::attach
