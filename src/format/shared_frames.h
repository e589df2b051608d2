// How many outer frames two backtraces share. Consecutive allocations of a thread
// share most of a deep stack, so both the recorder's staging ring and the
// encoder's backtrace hash resume from the shared frames instead of handling
// every frame again; finding them is a comparison of independent loads.
#pragma once

#include <cstddef>
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace memloupe::format {

// What a caller may know of a backtrace's outer frames before they are compared:
// the backtrace numbered `seq` of the caller's sequence `chain` (any identifier
// but 0) shares its outermost `shared` frames with the one numbered seq - 1.
// The recorder's staging ring knows this of every deep record, having compared
// them to carry only the frames that changed; the encoder then need not compare
// again, if the previous backtrace it hashed for the thread is that seq - 1.
struct SharedPrefix {
  uintptr_t chain = 0;
  uint32_t seq = 0;
  uint32_t shared = 0;
};

// The number of i < most with a[-1 - i] == b[-1 - i], counted from i = 0 until
// the first difference: `a_end` and `b_end` point one past the outermost frames
// of two backtraces stored innermost first. Compared eight frames at a time while
// all match, then two at a time (per frame, the comparison was a dependent
// chain of a load, compare and branch); up to 8 frames, one at a time (fewer
// instructions there: bench_alloc_mt's 5-7-frame stacks).
[[gnu::always_inline]] inline size_t shared_outer_frames(const uint64_t* a_end, const uint64_t* b_end,
                                                         size_t most) noexcept {
  size_t shared = 0;
#if defined(__SSE2__)
  if (most > 8) {
    const auto load = [](const uint64_t* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    const auto same = [&](size_t at) { return _mm_cmpeq_epi32(load(a_end - at - 2), load(b_end - at - 2)); };
    while (shared + 8 <= most) {
      const __m128i all = _mm_and_si128(_mm_and_si128(same(shared), same(shared + 2)),
                                        _mm_and_si128(same(shared + 4), same(shared + 6)));
      if (_mm_movemask_epi8(all) != 0xffff) break;
      shared += 8;
    }
    while (shared + 2 <= most) {
      const int eq = _mm_movemask_epi8(same(shared));
      if (eq != 0xffff) return (eq & 0xff00) == 0xff00 ? shared + 1 : shared;  // the pair's outer one
      shared += 2;
    }
  }
#endif
  const auto at = [](const uint64_t* end, size_t i) { return end[-1 - static_cast<ptrdiff_t>(i)]; };
  while (shared < most && at(a_end, shared) == at(b_end, shared)) ++shared;
  return shared;
}

}  // namespace memloupe::format
