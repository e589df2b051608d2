// Which memory the unwinder may read: the readable extent of the stack that a given
// stack pointer lies on. Stack slots are read only inside it, so a garbage frame
// pointer or CFA cannot make the unwinder fault.
#pragma once

#include <cstdint>

#include "recorder/unwind/module_lookup.h"

namespace memloupe::recorder::unwind_detail {

// The span of the calling thread's stack (or its signal alternate stack) containing
// `sp`, or an empty span if that cannot be established; the caller then hands the
// stack to libunwind. Every page of a returned span was readable when it was
// established (threads do not unmap their own live stack).
//
// Cost: nothing when `sp` is inside the span of the previous call (a per-thread
// cache). Otherwise (a thread's first unwind, or its stack grew): one
// process_vm_readv(2) probe per 64 pages of the glibc thread stack between sp and its
// top; /proc/self/maps (tens of microseconds) only for stacks glibc did not lay out;
// one sigaltstack(2) for code running on the signal alternate stack. At most
// kMaxStackRefreshes refreshes per thread.
Span stack_span(uintptr_t sp) noexcept;

inline constexpr unsigned kMaxStackRefreshes = 256;

// Whether every page of [begin, end) can be read now: the kernel copies one byte of
// each page for us (process_vm_readv on ourselves) and fails with EFAULT on an
// unmapped or unreadable one. No signal, no allocation; one syscall per 64 pages.
bool pages_readable(uintptr_t begin, uintptr_t end) noexcept;

}  // namespace memloupe::recorder::unwind_detail
