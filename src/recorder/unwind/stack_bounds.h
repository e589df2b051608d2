// Which memory the unwinder may read: the readable extent of the stack that a given
// stack pointer lies on. Stack slots are read only inside it, so a garbage frame
// pointer or CFA cannot make the unwinder fault.
#pragma once

#include <cstdint>

#include "recorder/unwind/module_lookup.h"

namespace memloupe::recorder::unwind_detail {

// The span of the calling thread's stack (or its signal alternate stack) containing
// `sp`, or an empty span if that cannot be established; the caller then hands the
// stack to libunwind.
//
// Cost: nothing when `sp` is on the stack seen by the previous call (a per-thread
// cache); one sigaltstack(2) when it is not; reading /proc/self/maps (tens of
// microseconds) the first time a thread unwinds and each time its stack grew past
// the mapping seen before, at most kMaxMapsReads times per thread.
Span stack_span(uintptr_t sp) noexcept;

inline constexpr unsigned kMaxMapsReads = 256;

}  // namespace memloupe::recorder::unwind_detail
