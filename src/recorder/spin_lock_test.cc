#include "recorder/spin_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace memloupe::recorder {
namespace {

TEST(SpinLockTest, ExcludesUnderContention) {
  SpinLock lock;
  uint64_t counter = 0;  // deliberately not atomic
  constexpr int kThreads = 4, kIters = 100'000;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&] {
      for (int j = 0; j < kIters; ++j) {
        LockGuard g(lock);
        ++counter;
        // A long section now and then so that waiters reach the futex sleep.
        if (j % 10'000 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, uint64_t{kThreads} * kIters);
}

// Waiters that do not take the lock (allocations waiting for a realloc) return
// only once it is free, including those that went to sleep on it, in every
// round (the unlock wakes one sleeper, which passes the wake on).
TEST(SpinLockTest, WaitUntilFreeReturnsOnlyOnceTheHolderLetsGo) {
  SpinLock lock;
  constexpr int kWaiters = 6, kRounds = 20;
  for (int round = 0; round < kRounds; ++round) {
    lock.lock();
    std::atomic<bool> released{false};
    std::atomic<int> early{0}, waiting{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < kWaiters; ++i)
      waiters.emplace_back([&] {
        waiting.fetch_add(1);
        lock.wait_until_free();
        early.fetch_add(!released.load());
      });
    while (waiting.load() != kWaiters) std::this_thread::yield();
    // Long enough for the waiters to be past their spinning, asleep.
    std::this_thread::sleep_for(std::chrono::milliseconds(round % 2 ? 3 : 0));
    released = true;
    lock.unlock();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(early.load(), 0) << "round " << round;
  }
  EXPECT_FALSE(lock.held());
}

TEST(SpinLockTest, TryLockAndReset) {
  SpinLock lock;
  EXPECT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock());
  lock.reset();  // as in a fork child
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

}  // namespace
}  // namespace memloupe::recorder
