// The recorder's clock: CLOCK_MONOTONIC nanoseconds, read through the TSC.
//
// In --all mode every call reads the clock, and the vDSO's clock_gettime took
// 7.4% of bench_alloc_mt's CPU time (44-52 ns a call on the 2-vCPU EPYC VM,
// against 17 ns for a bare rdtsc). So where the TSC is invariant (cpuid) and the
// kernel itself keeps time with it (clocksource "tsc": it found the TSC
// synchronised across cores), a read is rdtsc mapped onto CLOCK_MONOTONIC by a
// line the flush thread fits (calibrate(), every RSS period):
//
//   ns = anchor_ns + (tsc - anchor_tsc) * mult / 2^32
//
//  - Until the first fit (the first 20-50 ms of a session), and wherever the TSC
//    is not usable, reads are clock_gettime.
//  - The first fit measures ticks per ns over at least kMinBaselineNs from the
//    session start; each later one re-anchors the line where the old one stands
//    (continuous, so readings never step) and sets its slope to the long-baseline
//    rate corrected to meet CLOCK_MONOTONIC again by the next fit (slewing, as
//    NTP does): the error stays within a few µs of CLOCK_MONOTONIC, readings on
//    one thread never decrease, and all threads read the same line.
//  - If the line and CLOCK_MONOTONIC ever disagree by more than kMaxErrorNs (a VM
//    migrated to another host, a TSC reset), the fit starts over from there and
//    reads fall back to clock_gettime until it is done: the one case where a
//    thread's readings may step back, by that disagreement (the encoder clamps
//    times that go backwards, docs/FORMAT.md §5.2).
//  - A fork child's session calls start() again; the TSC is machine-wide, so a
//    line fitted in the parent would stay valid, but a fresh fit needs no proof.
//
// Readers take a sequence lock's read side (three loads and a compare: the
// parameters change at most every 50 ms) and fall back to clock_gettime while
// the parameters are being written, rather than wait.
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/sys.h"

namespace memloupe::recorder {

class TraceClock {
 public:
  static constexpr uint64_t kMinBaselineNs = 20'000'000;
  static constexpr uint64_t kMaxErrorNs = 100'000;
  // The slew aims to close the error over this long (the flush thread's RSS period).
  static constexpr uint64_t kSlewNs = 50'000'000;

  constexpr TraceClock() noexcept = default;
  TraceClock(const TraceClock&) = delete;
  TraceClock& operator=(const TraceClock&) = delete;

  // Session start: decides whether the TSC may be used and starts a fit.
  // `force_usable` is for tests on machines whose kernel keeps time otherwise.
  void start(bool force_usable = false) noexcept;
  // One thread at a time (the flush thread): fits or corrects the line.
  void calibrate() noexcept;
  // CLOCK_MONOTONIC, in ns.
  uint64_t now_ns() const noexcept {
#if defined(__x86_64__)
    const uint64_t s = seq_.load(std::memory_order_acquire);
    const uint64_t anchor_tsc = anchor_tsc_.load(std::memory_order_relaxed);
    const uint64_t anchor_ns = anchor_ns_.load(std::memory_order_relaxed);
    const uint64_t mult = mult_.load(std::memory_order_relaxed);
    const uint64_t tsc = __builtin_ia32_rdtsc();
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((s & 1) == 0 && mult != 0 && seq_.load(std::memory_order_relaxed) == s) [[likely]]
      return at(tsc, anchor_tsc, anchor_ns, mult);
#endif
    return monotonic_ns();
  }
  // Whether reads go through the TSC now (a fit is published).
  bool fitted() const noexcept { return mult_.load(std::memory_order_acquire) != 0; }

 private:
  static uint64_t at(uint64_t tsc, uint64_t anchor_tsc, uint64_t anchor_ns, uint64_t mult) noexcept {
    if (tsc <= anchor_tsc) return anchor_ns;  // an older tick than the anchor (another core, a hair early)
    return anchor_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(tsc - anchor_tsc) * mult) >> 32);
  }
  void publish(uint64_t anchor_tsc, uint64_t anchor_ns, uint64_t mult) noexcept;

  // Written by calibrate() only.
  bool usable_ = false;
  uint64_t base_tsc_ = 0;
  uint64_t base_ns_ = 0;
  // The published line (sequence-locked: odd while being written).
  alignas(64) std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> anchor_tsc_{0};
  std::atomic<uint64_t> anchor_ns_{0};
  std::atomic<uint64_t> mult_{0};  // ns per tick << 32; 0: not fitted
};

}  // namespace memloupe::recorder
