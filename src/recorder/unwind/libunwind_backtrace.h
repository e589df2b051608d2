// The reference unwinder: libunwind's local-only fast trace. It is the baseline the
// fast unwinder is measured and tested against, and the fallback it hands a stack to
// when a frame's rule cannot be cached.
//
// libunwind is not linked: it is dlopen'ed with RTLD_LOCAL by libunwind_load().
// Linked into the preload library, libunwind.so would join the traced program's
// global symbol scope, and its `_Unwind_*` (the C++ exception ABI, which libgcc_s
// also defines) could then bind the program's exceptions to libunwind's unwinder.
// Debian's libunwind.a is not position-independent, so it cannot be linked into a
// shared object privately instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::unwind_detail {

// Loads libunwind (its SONAME is fixed at build time) unless already loaded, and
// says whether it is usable. dlopen allocates and takes the loader's lock, so call
// this at a safe point — a library constructor, with the calling thread's hooks
// parked; not inside malloc or a signal handler. Idempotent; a failure is final
// (the functions below then do nothing), and a caller racing the thread that
// loads gets false without waiting.
bool libunwind_load() noexcept;

// Whether libunwind_load() has succeeded.
bool libunwind_loaded() noexcept;

// Return addresses of the caller of this function and its callers, innermost first:
// out[0] lies in the function that called libunwind_backtrace. Skips `skip` of them.
// Returns 0 if libunwind is not loaded.
size_t libunwind_backtrace(uint64_t* out, size_t max_frames, size_t skip) noexcept;

// Drops libunwind's cached per-IP state (after dlclose the addresses may be reused).
void libunwind_flush() noexcept;

}  // namespace memloupe::recorder::unwind_detail
