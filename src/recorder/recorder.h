// The recorder's transitions: starting the session (with the process, late by
// attach, again in a fork child), registering threads, the periodic flush, and
// ending the trace. The state they change, and that the rest of the recorder
// reads, is session.h.
#pragma once

#include <cstdint>

#include "format/events.h"
#include "recorder/config.h"
#include "recorder/session.h"
#include "recorder/thread_state.h"

namespace memloupe::recorder {

// Runs once per process image, on the first hook (the caller has parked its own
// hooks) or from the constructor: resolves the real functions, reads the
// configuration, and starts the session if one is configured.
void ensure_process_init() noexcept;

// Attach (attach_entry.cc): starts a session in a process running without one
// (the library was dlopen'ed late, or an earlier attach's session has Ended),
// configured by `lookup` instead of the environment. The caller's hooks are
// parked. False when a session is already running or none could be started.
bool start_session_late(EnvLookup lookup) noexcept;

// First hook on a thread: claims its slot, seeds its generator, writes its
// ThreadStart/ThreadName; leaves `t` Active with its first gap drawn.
void activate_thread(ThreadState& t) noexcept;

// The countdown a thread should continue with after a call (a fresh gap when
// sampling, kParked in --all mode, kNever when nothing will ever be recorded).
Gap gap_for_next_call(ThreadState& t) noexcept;

// Ends the trace: final CallTotals, TraceEnd, everything written and the file
// closed. Idempotent. With `wait_for_lock` false (abort), gives up if the trace
// lock stays busy for kSettleNs rather than risk deadlocking.
void end_session(format::EndReason reason, bool wait_for_lock = true) noexcept;

// In a fork child (pthread_atfork): by default the child ends its copy of the
// session without writing; with MEMLOUPE_FOLLOW_FORK=1 it starts its own trace.
// `t` is the forking thread, the child's only one. Returns whether the child
// now records its own trace (it then needs a flush thread: flush_thread.h).
bool restart_in_fork_child(ThreadState& t) noexcept;

// One period's work (RSS sample, totals, flush, drain). Runs on the flush
// thread, so it touches no thread-local state (see flush_thread.cc).
void periodic_flush(bool flush_due, bool rss_due) noexcept;

// Sums all threads' counters into a CallTotals event (under the trace lock).
void write_call_totals() noexcept;

}  // namespace memloupe::recorder
