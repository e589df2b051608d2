// Reading words of the stack being unwound. Callers bounds-check every address
// against the thread's stack span first (stack_bounds.h).
#pragma once

#include <emmintrin.h>

#include <cstdint>

namespace memloupe::recorder::unwind_detail {

// The reads touch other frames' slots, which a sanitizer would not know are meant to
// be read (and which may lie in another function's redzone-free spill area).
__attribute__((no_sanitize("address"))) inline uintptr_t load_stack_word(uintptr_t addr) {
  uintptr_t v;
  __builtin_memcpy(&v, reinterpret_cast<const void*>(addr), sizeof v);
  return v;
}

// Two stack words in one vector: `lo`'s in the low half, `hi`'s in the high
// half (a movq and a movhpd: two loads, no shuffle).
__attribute__((no_sanitize("address"))) inline __m128i load_stack_pair(uintptr_t lo, uintptr_t hi) {
  const __m128i low = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(lo));
  return _mm_castpd_si128(_mm_loadh_pd(_mm_castsi128_pd(low), reinterpret_cast<const double*>(hi)));
}

}  // namespace memloupe::recorder::unwind_detail
