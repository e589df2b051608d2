#include "recorder/trace_clock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace memloupe::recorder {
namespace {

// How far a reading may lie outside the CLOCK_MONOTONIC readings taken just
// before and after it: the fit's own error, not the speed of any code.
constexpr uint64_t kToleranceNs = 20'000;

void expect_between_monotonic_reads(const TraceClock& clock) {
  const uint64_t before = monotonic_ns();
  const uint64_t now = clock.now_ns();
  const uint64_t after = monotonic_ns();
  EXPECT_GE(now + kToleranceNs, before);
  EXPECT_LE(now, after + kToleranceNs);
}

// The kernel may keep time with another clocksource (a VM's kvm-clock, say),
// so the fitted-line tests force the TSC on; they need one of constant rate.
bool tsc_testable() { return TraceClock::invariant_tsc(); }

TEST(TraceClockTest, ReadsClockGettimeUntilFitted) {
  TraceClock clock;
  clock.start(/*force_usable=*/true);
  clock.calibrate();  // too early: the baseline is shorter than kMinBaselineNs
  EXPECT_FALSE(clock.fitted());
  const uint64_t before = monotonic_ns();
  const uint64_t now = clock.now_ns();
  EXPECT_GE(now, before);
  EXPECT_LE(now, monotonic_ns());
}

TEST(TraceClockTest, FittedLineFollowsMonotonicAndNeverStepsBack) {
  if (!tsc_testable()) GTEST_SKIP() << "no invariant TSC";
  TraceClock clock;
  clock.start(/*force_usable=*/true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(TraceClock::kMinBaselineNs + 5'000'000));
  uint64_t last = clock.now_ns();
  clock.calibrate();
  ASSERT_TRUE(clock.fitted());
  // The switch from clock_gettime to the line does not step back.
  EXPECT_GE(clock.now_ns(), last);
  // Re-fits (with the slew) keep the readings continuous and close to
  // CLOCK_MONOTONIC; sleeps make the periods uneven, as the flush thread's are.
  for (int round = 0; round < 12; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3 + round % 4 * 7));
    for (int i = 0; i < 2000; ++i) {
      const uint64_t now = clock.now_ns();
      ASSERT_GE(now, last) << "round " << round << " read " << i;
      last = now;
    }
    expect_between_monotonic_reads(clock);
    clock.calibrate();
    ASSERT_TRUE(clock.fitted());
  }
}

// Readers on other threads while the flush thread (here: this one) re-fits:
// each thread's readings are non-decreasing, and all stay close to
// CLOCK_MONOTONIC (one line for every thread).
TEST(TraceClockTest, ReadersOnOtherThreadsDuringRefits) {
  if (!tsc_testable()) GTEST_SKIP() << "no invariant TSC";
  TraceClock clock;
  clock.start(/*force_usable=*/true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(TraceClock::kMinBaselineNs + 5'000'000));
  clock.calibrate();
  ASSERT_TRUE(clock.fitted());
  std::atomic<bool> stop{false};
  std::atomic<int> backwards{0}, far{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      uint64_t last = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        const uint64_t before = monotonic_ns();
        const uint64_t now = clock.now_ns();
        const uint64_t after = monotonic_ns();
        if (now < last) backwards.fetch_add(1);
        if (now + kToleranceNs < before || now > after + kToleranceNs) far.fetch_add(1);
        last = now;
      }
    });
  }
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    clock.calibrate();
  }
  stop.store(true);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(backwards.load(), 0);
  EXPECT_EQ(far.load(), 0);
}

// The staging ring's writers stamp raw ticks and the consumer converts them
// later, after re-fits in between (ns_of_ticks): each converts to where the
// line of its reading put it, close to CLOCK_MONOTONIC at the reading, and
// the times of stamps read one after the other do not decrease, whether their
// line is the current one, the one before, or older (extrapolated back).
TEST(TraceClockTest, StampsConvertedAfterRefitsKeepTheirReadingsTime) {
  if (!tsc_testable()) GTEST_SKIP() << "no invariant TSC";
  TraceClock clock;
  clock.start(/*force_usable=*/true);
  const uint64_t before_fit = monotonic_ns();
  const uint64_t unfitted = clock.stamp();
  EXPECT_EQ(unfitted & TraceClock::kTicks, 0u);  // no line yet: CLOCK_MONOTONIC ns
  EXPECT_GE(unfitted, before_fit);
  std::this_thread::sleep_for(std::chrono::nanoseconds(TraceClock::kMinBaselineNs + 5'000'000));
  clock.calibrate();
  ASSERT_TRUE(clock.fitted());
  struct Reading {
    uint64_t before, stamp, after;
  };
  std::vector<Reading> readings;
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 300; ++i) {
      const uint64_t before = monotonic_ns();
      const uint64_t stamp = clock.stamp();
      readings.push_back({before, stamp, monotonic_ns()});
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2 + round % 3 * 3));
    clock.calibrate();
    ASSERT_TRUE(clock.fitted());
  }
  uint64_t last = 0;
  for (size_t i = 0; i < readings.size(); ++i) {
    const Reading& r = readings[i];
    ASSERT_NE(r.stamp & TraceClock::kTicks, 0u) << i;
    const uint64_t ns = clock.ns_of_ticks(r.stamp & ~TraceClock::kTicks);
    EXPECT_GE(ns + kToleranceNs, r.before) << "reading " << i;
    EXPECT_LE(ns, r.after + kToleranceNs) << "reading " << i;
    ASSERT_GE(ns, last) << "reading " << i;
    last = ns;
  }
  // A stamp of the current line converts as now_ns() reads.
  const uint64_t stamp = clock.stamp();
  const uint64_t now = clock.now_ns();
  EXPECT_LE(clock.ns_of_ticks(stamp & ~TraceClock::kTicks), now);
}

}  // namespace
}  // namespace memloupe::recorder
