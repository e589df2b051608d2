// Unwinding the calling thread's stack from inside malloc.
//
// Contract (the recorder relies on it): async-signal-safe enough to run inside a
// malloc hook — no allocation through the hooked functions, no locks that the
// program could hold, never crashes on a bad frame (stops instead).
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder {

// Writes up to `max_frames` return addresses of the calling thread into `out`,
// innermost first, skipping the innermost `skip` frames (the hook's own frames),
// and returns how many were written.
size_t unwind_here(uint64_t* out, size_t max_frames, size_t skip) noexcept;

// Called after dlopen/dlclose so cached per-module unwind tables are refreshed.
void unwind_modules_changed() noexcept;

}  // namespace memloupe::recorder
