// The process's lifecycle: the library constructor and the exit and fork
// handlers, on top of everything else (they start and end the session, the flush
// thread and heap snapshots).
//
// Order of events in a traced process:
//   first hook (maybe before any constructor) ─ ensure_process_init(): session
//     starts, events queue in memory
//   our constructor ─ environment cleaned for children, fork/exit handlers
//     registered, flush thread started (flush_thread.h; creating threads earlier
//     is unsafe: the first hook may run inside the dynamic loader)
//   ...the program...
//   exit() ─ our atexit handler (registered before the program's own, so it runs
//     after them) writes the totals and TraceEnd; _exit/abort/exec hooks do the same
#pragma once

namespace memloupe::recorder {

// The exit and fork handlers, registered once per process (the constructor, or
// the first attach of a process that started without a session).
void install_process_handlers() noexcept;

}  // namespace memloupe::recorder
