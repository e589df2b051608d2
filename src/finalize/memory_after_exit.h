// The process's memory torn down beside the exit instead of before it.
//
// A process's exit frees every page it mapped before its parent can reap it
// (the kernel's exit_mmap, before the exit is told): after `memloupe run` on
// cc1plus, ~270 MB of analysis tables, decoded events and libdw's trees,
// 22-28 ms of a single CPU after the finalise was written, with the other CPU
// idle (docs/RECORDER.md, "After the exit, 2026-11-26 (fourth round)").
// Nothing in it is needed once the files are written and closed, so the exit
// leaves the mapping to a helper: a process made with CLONE_VM holds the
// memory, so the exit of the last of memloupe's threads only drops a
// reference to it; the helper is killed when memloupe's main thread exits
// (PR_SET_PDEATHSIG) and its own exit then frees the pages, after the shell
// (or whoever waits for `memloupe run`) has seen memloupe's exit. The helper
// closes its copies of the descriptors first: a pipe reading memloupe's
// output ends with memloupe. The work is the same, done after the wait,
// not during it; its CPU is the helper's, reaped by init (or a subreaper),
// not memloupe's parent.
#pragma once

#include <sys/types.h>

namespace memloupe::finalize {

// Called right before the process exits, on its main thread, after every file
// is written: nothing that runs after it may need the helper (it touches no
// memory but its own stack). Does nothing where the helper cannot be made
// (no close_range, a sanitizer's runtime watching the process) or is not
// wanted (MEMLOUPE_EXIT_HELPER=0: where PID 1 never reaps, each helper would
// stay a zombie); the exit then frees the memory itself, as before. Returns
// the helper's pid, or 0.
pid_t free_memory_after_exit();

}  // namespace memloupe::finalize
