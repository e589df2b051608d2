#include "recorder/spin_lock.h"

#include <gtest/gtest.h>

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
