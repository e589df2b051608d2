// The trace lock: an uncontended acquire is one compare-exchange; a waiter spins
// briefly, then sleeps on a futex (so a preempted holder does not burn the other
// core, the failure heaptrack's 1 µs sleep-spin has).
//
// Word states: 0 free, 1 held, 2 held and someone may be asleep (Drepper, "Futexes
// are tricky", mutex #3). No heap, no pthread: usable inside malloc and in a
// fork child after reset().
#pragma once

#include <sys/syscall.h>

#include <atomic>
#include <cstdint>

#include "recorder/sys.h"

namespace memloupe::recorder {

// The busy-wait hint: lets the sibling hyperthread run, saves power.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Waits until ready() holds, for a thread that is usually running and a few
// instructions from making it hold: spins briefly, then yields the CPU (the
// awaited thread may have been preempted; under valgrind, which runs one thread
// at a time, it always needs the CPU), for at most `limit_ns` (0: no limit).
// With `nap_ns`, after kYieldsBeforeNaps yields it naps that long at a time
// instead: a preempted thread may wait milliseconds for a CPU on a loaded
// machine, and yielding all that time cost a waiting consumer up to ~130,000
// sched_yield calls in one run (staging_ring.cc). Returns whether ready() held.
inline constexpr int kYieldsBeforeNaps = 16;
template <class Ready>
bool spin_then_yield(Ready ready, uint64_t limit_ns = 0, uint64_t nap_ns = 0) noexcept {
  for (int i = 0; i < 64; ++i) {
    if (ready()) return true;
    cpu_relax();
  }
  const uint64_t give_up = limit_ns ? monotonic_ns() + limit_ns : UINT64_MAX;
  for (int yields = 0; !ready(); ++yields) {
    if (monotonic_ns() >= give_up) return false;
    if (nap_ns == 0 || yields < kYieldsBeforeNaps) {
      sys_call(SYS_sched_yield);
    } else {
      // A futex word nobody wakes: a nap of at most nap_ns that touches no
      // thread-local state (the flush thread has none).
      const uint32_t never = 0;
      futex_wait(&never, 0, nap_ns);
    }
  }
  return true;
}

class SpinLock {
 public:
  constexpr SpinLock() noexcept = default;

  void lock() noexcept {
    uint32_t expected = 0;
    if (word_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                      std::memory_order_relaxed)) [[likely]]
      return;
    lock_slow();
  }
  bool try_lock() noexcept {
    uint32_t expected = 0;
    return word_.compare_exchange_strong(expected, 1, std::memory_order_acquire,
                                         std::memory_order_relaxed);
  }
  void unlock() noexcept {
    // Matched by the acquire in lock()/lock_slow(); a 2 means a sleeper to wake.
    if (word_.exchange(0, std::memory_order_release) == 2) [[unlikely]]
      wake_one();
  }
  // Whether someone holds it (acquire: what the last holder did before unlocking
  // is visible once this returns false).
  bool held() const noexcept { return word_.load(std::memory_order_acquire) != 0; }
  // Returns once the lock is free (acquire, as held()), without taking it: spins
  // briefly, then sleeps as a waiter of lock() would. For a holder that may
  // itself sleep (a realloc waiting for room in the staging ring, which the
  // program's allocations wait for): yielding in a loop for it burnt CPU.
  void wait_until_free() noexcept {
    if (held()) [[unlikely]]
      wait_slow();
  }
  // A fork child owns the only thread: whoever held the lock in the parent is gone.
  void reset() noexcept { word_.store(0, std::memory_order_relaxed); }

 private:
  void lock_slow() noexcept;
  void wait_slow() noexcept;
  void wake_one() noexcept;
  std::atomic<uint32_t> word_{0};
};

// Scoped holder.
class LockGuard {
 public:
  explicit LockGuard(SpinLock& l) noexcept : l_(l) { l_.lock(); }
  ~LockGuard() { l_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  SpinLock& l_;
};

}  // namespace memloupe::recorder
