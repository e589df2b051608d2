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

// Starts `clock` on the TSC and waits out the first fit's baseline.
void start_fitted(TraceClock& clock) {
  clock.start(/*force_usable=*/true);
  std::this_thread::sleep_for(std::chrono::nanoseconds(TraceClock::kMinBaselineNs + 5'000'000));
  clock.calibrate();
  ASSERT_TRUE(clock.fitted());
}

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
  ASSERT_NO_FATAL_FAILURE(start_fitted(clock));
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

// A drain's line (TraceClock::Line) converts every tick as ns_of_ticks() does:
// before its anchor, while the slew is being absorbed, at the tick from which
// it is all absorbed (settled_tsc, exactly: one tick either side), well past
// it, and once a re-fit has published another line.
TEST(TraceClockTest, ALinesConversionsAreNsOfTicksExactly) {
  if (!tsc_testable()) GTEST_SKIP() << "no invariant TSC";
  TraceClock clock;
  ASSERT_NO_FATAL_FAILURE(start_fitted(clock));
  constexpr uint64_t kOrigin = 12'345;
  // A re-fit whose error left a slew to absorb (settled past the anchor).
  TraceClock::Line line;
  for (int tries = 0; tries < 50; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    clock.calibrate();
    line = clock.line(kOrigin);
    if (line.seq != TraceClock::Line::kNone && line.settled_tsc > line.anchor_tsc + 1) break;
  }
  ASSERT_NE(line.seq, TraceClock::Line::kNone);
  ASSERT_GT(line.settled_tsc, line.anchor_tsc + 1) << "no re-fit left a slew";
  const auto expect_same = [&](uint64_t tsc) {
    ASSERT_EQ(clock.ns_since(line, tsc), clock.ns_of_ticks(tsc) - kOrigin) << tsc - line.anchor_tsc;
  };
  const uint64_t span = line.settled_tsc - line.anchor_tsc;
  for (uint64_t d = 0; d <= 4'000; ++d) {
    expect_same(line.settled_tsc - 2'000 + d);
    expect_same(line.anchor_tsc + d);
  }
  for (uint64_t k = 0; k <= 4'000; ++k) {
    expect_same(line.anchor_tsc - span + k * span / 1'000);          // before the anchor to 3 spans past it
    expect_same(line.settled_tsc + k * clock.ticks_in(1'000'000));  // to 4 s on
  }
  // Another line published: the old Line's conversions are the new line's.
  std::this_thread::sleep_for(std::chrono::milliseconds(3));
  clock.calibrate();
  const uint64_t now = clock.stamp() & ~TraceClock::kTicks;
  for (uint64_t d = 0; d <= 1'000; ++d) expect_same(now + d * 1'000);
  // No line: every tick takes ns_of_ticks().
  const TraceClock::Line none;
  EXPECT_EQ(clock.ns_since(none, now), clock.ns_of_ticks(now));
}

}  // namespace
}  // namespace memloupe::recorder
