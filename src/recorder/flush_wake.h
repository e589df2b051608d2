// How the recorder asks its flush thread (flush_thread.h) to work before its
// period is up: a futex word the thread sleeps on. The writers that fill the
// output or the staging ring wake it; it owns nothing else, so they need not
// know the thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/sys.h"

namespace memloupe::recorder {

class FlushWake {
 public:
  // Called on every staged record while the ring is filling: a plain load keeps
  // the line shared until a wake is actually due.
  void wake() noexcept {
    if (pending_.load(std::memory_order_relaxed) || pending_.exchange(true, std::memory_order_relaxed))
      return;
    poke();
  }
  // A wake that is never skipped (stopping the thread).
  void poke() noexcept {
    word_.fetch_add(1, std::memory_order_release);
    futex_wake(reinterpret_cast<const uint32_t*>(&word_), 1);
  }

  // The flush thread, before a round of work: what wait() then compares. Read
  // before the work, so that a wake arriving during it (draining the staging
  // ring takes a while) makes the wait return at once instead of being lost, as
  // the waker saw `pending_` set and did not wake again.
  uint32_t begin_round() noexcept {
    const uint32_t seen = word_.load(std::memory_order_acquire);
    pending_.store(false, std::memory_order_relaxed);
    return seen;
  }
  // Sleeps up to `timeout_ns` unless a wake came since begin_round().
  void wait(uint32_t seen, uint64_t timeout_ns) noexcept {
    futex_wait(reinterpret_cast<const uint32_t*>(&word_), seen, timeout_ns);
  }

 private:
  std::atomic<uint32_t> word_{0};
  std::atomic<bool> pending_{false};
};

}  // namespace memloupe::recorder
