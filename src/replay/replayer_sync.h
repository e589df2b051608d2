// Cross-thread order in the replayer without a lock that serialises calls.
//
// Each replay thread owns a progress word: the number of its ops that have run,
// stored only after ops marked kPublish (op_file.h), which are the ops another
// thread waits for: an allocation whose block another thread frees or
// reallocates, and the op just before a thread's first call in trace order.
// A Wait op blocks its thread until the named thread's word reaches a count.
//
// No deadlock: the preparation emits a Wait only for an op that comes *earlier
// in trace order* than the op after the Wait, and each thread runs its ops in
// trace order. Suppose every unfinished thread were blocked; take the blocked
// Wait whose following op is earliest in trace order, at position p. It waits
// for an op at q < p on thread B. B has not run q, so B's current op is at or
// before q, hence before p; being blocked, it contradicts the choice of p.
// So some thread can always proceed, and every Wait is eventually satisfied.
//
// Memory order: publish() stores with release semantics after the op's call
// returned and its slot was written, and the waiter reads with acquire, so the
// waiter sees the pointer the op stored. Sleeping uses the futex on the word:
// the waiter announces itself (waiters, seq_cst RMW) and re-reads the word
// (seq_cst); the publisher stores the word (seq_cst) and reads `waiters`
// (seq_cst). In the single total order one of them sees the other, so either
// the waiter does not sleep or the publisher wakes it; FUTEX_WAIT re-checks the
// word in the kernel against the value the waiter read.
#pragma once

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdint>

namespace memloupe::replay {

inline void futex_wait(std::atomic<uint32_t>& word, uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
inline void futex_wake_all(std::atomic<uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// One per replay thread, on its own cache line (the owner writes it only at
// published ops; waiters poll it).
struct alignas(64) Progress {
  std::atomic<uint32_t> done{0};
  std::atomic<uint32_t> waiters{0};

  void publish(uint32_t count) {
    done.store(count, std::memory_order_seq_cst);
    if (waiters.load(std::memory_order_seq_cst) != 0) futex_wake_all(done);
  }

  // Returns whether it had to wait at all (counted in the report).
  bool wait_until(uint32_t target) {
    if (done.load(std::memory_order_acquire) >= target) return false;
    // Spin briefly: the op waited for is usually a few calls away on a running
    // thread. With more replay threads than cores, sleep soon rather than burn
    // the core the other thread needs.
    for (int i = 0; i < 200; ++i) {
      cpu_relax();
      if (done.load(std::memory_order_acquire) >= target) return true;
    }
    for (;;) {
      waiters.fetch_add(1, std::memory_order_seq_cst);
      const uint32_t seen = done.load(std::memory_order_seq_cst);
      if (seen >= target) {
        waiters.fetch_sub(1, std::memory_order_relaxed);
        return true;
      }
      futex_wait(done, seen);
      waiters.fetch_sub(1, std::memory_order_relaxed);
      if (done.load(std::memory_order_acquire) >= target) return true;
    }
  }
};

// The start gate: every replay thread is created first and waits here, so
// thread creation is not inside the measured run.
struct Gate {
  std::atomic<uint32_t> open{0};
  void wait() {
    while (open.load(std::memory_order_acquire) == 0) futex_wait(open, 0);
  }
  void release() {
    open.store(1, std::memory_order_release);
    futex_wake_all(open);
  }
};

}  // namespace memloupe::replay
