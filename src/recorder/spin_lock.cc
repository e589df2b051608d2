#include "recorder/spin_lock.h"

#include "recorder/sys.h"

namespace memloupe::recorder {
namespace {
// About a microsecond of spinning: longer than a typical critical section (encode
// one event, update the table), shorter than a futex round trip.
constexpr int kSpins = 200;
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

void SpinLock::wake_one() noexcept { futex_wake(reinterpret_cast<const uint32_t*>(&word_), 1); }

}  // namespace memloupe::recorder
