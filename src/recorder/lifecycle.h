// Process and thread lifecycle: the library constructor, exit, fork, thread exit
// and the background flush thread.
//
// Order of events in a traced process:
//   first hook (maybe before any constructor) ─ ensure_process_init(): session
//     starts, events queue in memory
//   our constructor ─ environment cleaned for children, fork/exit handlers
//     registered, flush thread started (creating threads earlier is unsafe: the
//     first hook may run inside the dynamic loader)
//   ...the program...
//   exit() ─ our atexit handler (registered before the program's own, so it runs
//     after them) writes the totals and TraceEnd; _exit/abort/exec hooks do the same
#pragma once

#include "recorder/thread_state.h"

namespace memloupe::recorder {

// A pthread key whose destructor runs when a registered thread exits.
void create_thread_exit_key() noexcept;
void watch_thread_exit(ThreadSlot* slot) noexcept;

// Starts the thread that drains the output, flushes every MEMLOUPE_FLUSH_MS and
// samples RSS. Its own allocations pass through unrecorded.
void start_flush_thread() noexcept;
// The flush thread's kernel id (0 if none): it blocks every signal, so a heap
// snapshot must not wait for it to stop.
uint32_t flush_thread_tid() noexcept;

// Waits (up to two flush periods) for the flush thread to see that the session
// has ended and return, so that a later attach's session gets only its own.
void stop_flush_thread() noexcept;

// The exit and fork handlers, registered once per process (the constructor, or
// the first attach of a process that started without a session).
void install_process_handlers() noexcept;

// Asks the flush thread to drain the output now (it is filling up).
void wake_flush_thread() noexcept;

}  // namespace memloupe::recorder
