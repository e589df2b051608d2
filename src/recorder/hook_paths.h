// The shared bodies of all hooks: inline fast paths here, out-of-line slow paths
// in record.cc (declared in record.h). Every exported allocation function is one
// line calling one of allocate<>, release<> or reallocate<> (hooks.cc), so the
// rules live here once.
//
// Fast-path cost (x86-64, gcc 12 -O2; disassembly of libmemloupe_preload.so):
//   malloc: 7 instructions, the tail jump to the real malloc included —
//           TLS offset load, `sub %size, %fs:countdown` + jle, slot load,
//           two counter adds to memory, jmp *real.malloc
//   free:  13 instructions — TLS offset load, countdown sign test + js, filter
//           address, slot load, counter add, hash (movabs, mul: sample_filter.h),
//           word index shift, summary word load, bt + jb, jmp *real.free
//   operator new: 13, as many as libstdc++'s own (which calls malloc): it keeps
//           the size for the new-handler and tests the result, so it calls the
//           real malloc instead of jumping to it; n == 0 is left to malloc(0)
//   operator delete (every form): 13, as free
// Callgrind, hooks with no sample due (MEMLOUPE_EVERY=1TiB) against none, per
// pair in a loop: malloc(64)/free +20 instructions (glibc alone: 139);
// new/sized delete of 64 bytes +7 (libstdc++ and glibc alone: 159).
// bench/hook_bench.cc measures the time: ~1.2 ns per pair on the dev machine.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/funcs.h"
#include "recorder/real_funcs.h"
#include "recorder/record.h"
#include "recorder/session.h"
#include "recorder/thread_state.h"
#include "recorder/unwind/regs.h"

namespace memloupe::recorder {

using format::Func;

// Subtracts `size` from the countdown (wrapping, so absurd sizes cannot overflow)
// and says whether the fast path may proceed.
[[gnu::always_inline]] inline bool consume(ThreadState& t, uint64_t size) noexcept {
#if defined(__x86_64__)
  // `sub %size, %fs:countdown` then branch on the flags: the compiler alone
  // emits a load, sub, store and test.
  bool positive;
  asm("subq %2, %0" : "+m"(t.countdown), "=@ccg"(positive) : "er"(size));
  return positive;
#else
  t.countdown = static_cast<int64_t>(static_cast<uint64_t>(t.countdown) - size);
  return t.countdown > 0;
#endif
}

// Out-of-line entries taking the real call by value, so that a hook's fast path
// needs no stack frame: it ends in a tail jump to the real function or to these.
// They take the registers a backtrace starts from; the barrier keeps their frame
// (no tail call) while the slow path unwinds from it.
template <Func F, class Call>
[[gnu::noinline]] void* allocate_cold(uint64_t size, uint32_t alignment, Call call) noexcept {
  UnwindRegs start;
  MEMLOUPE_CAPTURE_REGS(start);
  void* p = allocate_slow({F, size, alignment, &start}, RealCall(call));
  asm volatile("" ::: "memory");
  return p;
}
template <Func F, class Call>
[[gnu::noinline]] void* reallocate_cold(void* old, uint64_t size, Call call) noexcept {
  UnwindRegs start;
  MEMLOUPE_CAPTURE_REGS(start);
  void* p = reallocate_slow({F, size, 0, &start}, old, RealCall(call));
  asm volatile("" ::: "memory");
  return p;
}

template <Func F, class Call>
[[gnu::always_inline]] inline void* allocate(uint64_t size, uint32_t alignment, Call call) noexcept {
  ThreadState& t = t_state;
  if (consume(t, size)) [[likely]] {
    t.slot->counters.add(F, size);
    return call();
  }
  return allocate_cold<F>(size, alignment, call);
}

// `RealFree` false: only the recording, for munmap (map_hooks.cc), whose caller
// then unmaps.
template <Func F, bool RealFree = true>
[[gnu::always_inline]] inline void release(void* p) noexcept {
  constexpr auto slow = RealFree ? release_slow : forget_slow;
  ThreadState& t = t_state;
  // Between calls an Active thread's countdown is >= 1; parked it is negative.
  if (t.countdown < 0) [[unlikely]]
    return slow(F, p, /*counted=*/false);
  t.slot->counters.add_call(F);
  if (g_filter.may_contain(reinterpret_cast<uintptr_t>(p))) [[unlikely]]
    return slow(F, p, /*counted=*/true);
  if constexpr (RealFree) g_real.free(p);
}

template <Func F, class Call>
[[gnu::always_inline]] inline void* reallocate(void* old, uint64_t size, Call call) noexcept {
  if (old == nullptr) return allocate<F>(size, 0, call);
  ThreadState& t = t_state;
  if (consume(t, size) && !g_filter.may_contain(reinterpret_cast<uintptr_t>(old))) [[likely]] {
    t.slot->counters.add(F, size);
    return call();
  }
  return reallocate_cold<F>(old, size, call);
}

}  // namespace memloupe::recorder
