// How often the fast unwinder had to hand a stack to libunwind. One relaxed counter,
// touched only on the (rare) fallback path so the fast path shares no cache line.
#pragma once

#include <cstdint>

namespace memloupe::recorder::unwind_detail {

void count_fallback() noexcept;
uint64_t fallback_count() noexcept;

}  // namespace memloupe::recorder::unwind_detail
