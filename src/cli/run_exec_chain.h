// `memloupe run`: the traces of a process that exec'd other programs.
//
// The recorder gives each image of the launched process its own file
// (src/recorder/exec_follow.h): the first at the planned path, the images it
// exec'd in turn at PATH.1, PATH.2, ... (the pid does not change, so %p cannot
// tell them apart). After the run, the launcher finalises the chain in order and
// looks at how its last trace ended: a trace that ended at an exec whose image
// recorded nothing means the rest of the run is missing, and the user is told.
#pragma once

#include <optional>
#include <string>

#include "format/events.h"

namespace memloupe::cli {

// The n-th image's file (n = 0: the launched program's own).
std::string exec_chain_path(const std::string& first, unsigned n);

// How a trace (raw or finalised) ended: from its analysis index when it has a
// fresh one, else by reading its events. Nothing if it has no TraceEnd or
// cannot be read.
std::optional<format::EndReason> trace_end_reason(const std::string& path);

// The warning for a chain whose last trace is at `path` and ended for `reason`
// (its TraceEnd's, nothing if none), or nothing if it did not end at an exec.
// `followed`: exec-following was on.
std::optional<std::string> exec_end_warning(const std::string& path, std::optional<format::EndReason> reason,
                                            bool followed);

}  // namespace memloupe::cli
