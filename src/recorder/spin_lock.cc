#include "recorder/spin_lock.h"

#include <cstdint>

#include "recorder/sys.h"

namespace memloupe::recorder {
namespace {
// About a microsecond of spinning: longer than a typical critical section (encode
// one event, update the table), shorter than a futex round trip.
constexpr int kSpins = 200;
// wait_slow()'s longest sleep between looks at the word.
constexpr uint64_t kWaitNs = 1'000'000;
}  // namespace

void SpinLock::lock_slow() noexcept {
  for (int i = 0; i < kSpins; ++i) {
    cpu_relax();
    uint32_t expected = 0;
    if (word_.load(std::memory_order_relaxed) == 0 &&
        word_.compare_exchange_weak(expected, 1, std::memory_order_acquire,
                                    std::memory_order_relaxed))
      return;
  }
  // Mark "held, maybe waiters" and sleep until it was free when we marked it.
  while (word_.exchange(2, std::memory_order_acquire) != 0)
    futex_wait(reinterpret_cast<const uint32_t*>(&word_), 2);
}

void SpinLock::wait_slow() noexcept {
  for (int i = 0; i < kSpins; ++i) {
    cpu_relax();
    if (!held()) return;
  }
  bool slept = false;
  for (uint32_t w; (w = word_.load(std::memory_order_acquire)) != 0;) {
    // Mark "someone may be asleep", so that unlock() wakes a sleeper.
    if (w == 1 && !word_.compare_exchange_weak(w, 2, std::memory_order_relaxed)) continue;
    // Bounded: a wake meant for us can go to a lock() waiter instead, which
    // then holds the lock at 2 and passes the wake on only at its unlock.
    futex_wait(reinterpret_cast<const uint32_t*>(&word_), 2, kWaitNs);
    slept = true;
  }
  // unlock() woke one sleeper, us, and we leave without the lock: the others
  // (asleep at 2 on a word that is 0 now) would not be woken by the next holder.
  if (slept) futex_wake(reinterpret_cast<const uint32_t*>(&word_), INT32_MAX);
}

void SpinLock::wake_one() noexcept { futex_wake(reinterpret_cast<const uint32_t*>(&word_), 1); }

}  // namespace memloupe::recorder
