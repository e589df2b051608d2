// The background flush thread: drains the output, flushes every
// MEMLOUPE_FLUSH_MS and samples RSS (recorder.h, periodic_flush()). Writers
// wake it early through Session::flush_wake (flush_wake.h).
#pragma once

#include <cstdint>

namespace memloupe::recorder {

// Starts the thread. Its own allocations pass through unrecorded.
void start_flush_thread() noexcept;
// The flush thread's kernel id (0 if none): it blocks every signal, so a heap
// snapshot must not wait for it to stop.
uint32_t flush_thread_tid() noexcept;

// Waits (up to two flush periods) for the flush thread to see that the session
// has ended and return, so that a later attach's session gets only its own.
void stop_flush_thread() noexcept;

}  // namespace memloupe::recorder
