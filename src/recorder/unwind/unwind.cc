#include "recorder/unwind/unwind.h"

#include "recorder/unwind/libunwind_backtrace.h"

namespace memloupe::recorder {

__attribute__((noinline)) size_t unwind_here(uint64_t* out, size_t max_frames,
                                             size_t skip) noexcept {
  // +1: our own frame, whose return address lies in the caller.
  const size_t n = unwind_detail::libunwind_backtrace(out, max_frames, skip + 1);
  asm volatile("" ::: "memory");  // not a tail call: keep our frame on the stack
  return n;
}

void unwind_modules_changed() noexcept { unwind_detail::libunwind_flush(); }

}  // namespace memloupe::recorder
