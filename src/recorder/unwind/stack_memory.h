// Reading words of the stack being unwound. Callers bounds-check every address
// against the thread's stack span first (stack_bounds.h).
#pragma once

#include <cstdint>

namespace memloupe::recorder::unwind_detail {

// The reads touch other frames' slots, which a sanitizer would not know are meant to
// be read (and which may lie in another function's redzone-free spill area).
__attribute__((no_sanitize("address"))) inline uintptr_t load_stack_word(uintptr_t addr) {
  uintptr_t v;
  __builtin_memcpy(&v, reinterpret_cast<const void*>(addr), sizeof v);
  return v;
}

}  // namespace memloupe::recorder::unwind_detail
