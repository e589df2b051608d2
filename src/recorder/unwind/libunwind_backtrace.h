// The reference unwinder: libunwind's local-only fast trace. It is the baseline the
// fast unwinder is measured and tested against, and the fallback it hands a stack to
// when a frame's rule cannot be cached.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::unwind_detail {

// Return addresses of the caller of this function and its callers, innermost first:
// out[0] lies in the function that called libunwind_backtrace. Skips `skip` of them.
size_t libunwind_backtrace(uint64_t* out, size_t max_frames, size_t skip) noexcept;

// Drops libunwind's cached per-IP state (after dlclose the addresses may be reused).
void libunwind_flush() noexcept;

}  // namespace memloupe::recorder::unwind_detail
