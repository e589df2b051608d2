// Bounded single-producer/single-consumer queue used to hand blocks from one thread to
// another so that they are freed by a thread other than the one that allocated them.
// It never allocates after construction (a std::deque would allocate at timing-dependent
// moments and make the workload's call count vary run to run).
//
// A side that finds the queue full (producer) or empty (consumer) sleeps on the other
// side's counter. While it sleeps its own counter is frozen, so the occupancy seen by the
// other side moves one step at a time and crosses the wake threshold exactly once: the
// other side wakes it at that crossing (or at the producer's last item), once per sleep.
// Waking on every item would make the workload measure futex ping-pong, not allocation.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace bench {

template <typename T, size_t N>
class SpscQueue {
  static_assert((N & (N - 1)) == 0, "N must be a power of two so that indices may wrap");
  static constexpr uint32_t kWakeBatch = N / 4;

 public:
  // `last` marks the final push: it wakes a sleeping consumer whatever the batch.
  void push(T value, bool last = false) {
    uint32_t tail = tail_.load(std::memory_order_relaxed);
    while (tail - head_.load(std::memory_order_acquire) >= N) {
      sleep_on(head_, producer_sleeping_, [&](uint32_t head) { return tail - head >= N; });
    }
    slots_[tail % N] = value;
    // seq_cst store then seq_cst load of the other side's flag: with the sleeper's
    // flag store + counter re-check in sleep_on(), one side always sees the other.
    tail_.store(tail + 1, std::memory_order_seq_cst);
    if (consumer_sleeping_.load(std::memory_order_seq_cst) &&
        (last || tail + 1 - head_.load(std::memory_order_acquire) == kWakeBatch)) {
      tail_.notify_one();
    }
  }

  T pop() {
    uint32_t head = head_.load(std::memory_order_relaxed);
    while (tail_.load(std::memory_order_acquire) == head) {
      sleep_on(tail_, consumer_sleeping_, [&](uint32_t tail) { return tail == head; });
    }
    T value = slots_[head % N];
    head_.store(head + 1, std::memory_order_seq_cst);
    if (producer_sleeping_.load(std::memory_order_seq_cst) &&
        tail_.load(std::memory_order_acquire) - (head + 1) == N - kWakeBatch) {
      head_.notify_one();
    }
    return value;
  }

 private:
  // Announces the sleep, re-checks, then waits for the watched counter to move. The wait
  // may return before the crossing (the counter moved); the caller's loop then sleeps
  // again, and the crossing is still ahead. Only the sleeper clears its flag.
  template <typename Blocked>
  static void sleep_on(std::atomic<uint32_t>& counter, std::atomic<bool>& sleeping,
                       Blocked blocked) {
    sleeping.store(true, std::memory_order_seq_cst);
    uint32_t seen = counter.load(std::memory_order_seq_cst);
    if (blocked(seen)) counter.wait(seen, std::memory_order_seq_cst);
    sleeping.store(false, std::memory_order_relaxed);
  }

  std::array<T, N> slots_{};
  // Free-running counters (wrap at 2^32); each side's state on its own cache line.
  alignas(64) std::atomic<uint32_t> head_{0};
  std::atomic<bool> producer_sleeping_{false};
  alignas(64) std::atomic<uint32_t> tail_{0};
  std::atomic<bool> consumer_sleeping_{false};
};

}  // namespace bench
