// The recorder's clock: CLOCK_MONOTONIC nanoseconds, read through the TSC.
//
// In --all mode every call reads the clock, and the vDSO's clock_gettime took
// 7.4% of bench_alloc_mt's CPU time (44-52 ns a call on the 2-vCPU EPYC VM,
// against 17 ns for a bare rdtsc). So where the TSC is invariant (cpuid) and the
// kernel itself keeps time with it (clocksource "tsc": it found the TSC
// synchronised across cores), a read is rdtsc mapped onto CLOCK_MONOTONIC by a
// line the flush thread fits (calibrate(), every RSS period):
//
//   d  = (tsc - anchor_tsc) * mult / 2^32
//   ns = anchor_ns + d - min(d / 64, slew)      (slew >= 0: the line was ahead)
//   ns = anchor_ns + d + min(d / 64, -slew)     (slew < 0: it was behind)
//
//  - Until the first fit (the first 20-50 ms of a session), and wherever the TSC
//    is not usable, reads are clock_gettime.
//  - The first fit measures ticks per ns over at least kMinBaselineNs from the
//    session start, and each later one over the whole session so far (the rate
//    only gets more exact). A re-fit anchors the new line where the old one
//    stands (continuous, so readings never step) and absorbs the old line's
//    error against CLOCK_MONOTONIC at 1/64 of the rate, then runs at the fitted
//    rate (slewing, as NTP does, but bounded: however late the next fit comes,
//    the slew cannot overshoot). The error stays within a few µs of
//    CLOCK_MONOTONIC, readings on one thread do not decrease (but see the
//    readers below), and all threads read the same line.
//  - If the line and CLOCK_MONOTONIC ever disagree by more than kMaxErrorNs (a VM
//    migrated to another host, a TSC reset), the fit starts over from there and
//    reads fall back to clock_gettime until it is done: the one case where a
//    thread's readings may step back, by that disagreement (the encoder clamps
//    times that go backwards, docs/FORMAT.md §5.2).
//  - A fork child's session calls start() again; the TSC is machine-wide, so a
//    line fitted in the parent would stay valid, but a fresh fit needs no proof.
//  - In --all mode the program's threads do not convert: they stamp raw ticks
//    (stamp()), and whoever applies their records converts them later with the
//    line that was published at the reading (ns_of_ticks(): the current line or
//    the one before it; docs/RECORDER.md, "The writers' side in --all mode").
//
// Readers take a sequence lock's read side (four loads and a compare: the
// parameters change at most every 50 ms) and fall back to clock_gettime while
// the parameters are being written (a few stores), rather than wait: a reader
// landing in that window may read up to the line's error (< 1 µs measured)
// below its previous reading, as may one whose old-line reading raced a re-fit
// anchored a few instructions earlier. Both are rarer than one in millions of
// reads; the encoder clamps what they leave.
#pragma once

#include <atomic>
#include <cstdint>

#include "recorder/sys.h"

namespace memloupe::recorder {

class TraceClock {
 public:
  static constexpr uint64_t kMinBaselineNs = 20'000'000;
  static constexpr uint64_t kMaxErrorNs = 100'000;
  // A re-fit's error is absorbed at 2^-kSlewShift of the clock's rate.
  static constexpr unsigned kSlewShift = 6;

  constexpr TraceClock() noexcept = default;
  TraceClock(const TraceClock&) = delete;
  TraceClock& operator=(const TraceClock&) = delete;

  // Session start: decides whether the TSC may be used and starts a fit.
  // `force_usable` is for tests on machines whose kernel keeps time otherwise.
  void start(bool force_usable = false) noexcept;
  // Whether the cpu says its TSC ticks at a constant rate (x86-64 only).
  static bool invariant_tsc() noexcept;
  // One thread at a time (the flush thread): fits or corrects the line.
  void calibrate() noexcept;
  // CLOCK_MONOTONIC, in ns.
  uint64_t now_ns() const noexcept {
#if defined(__x86_64__)
    const uint64_t s = seq_.load(std::memory_order_acquire);
    const uint64_t anchor_tsc = anchor_tsc_.load(std::memory_order_relaxed);
    const uint64_t anchor_ns = anchor_ns_.load(std::memory_order_relaxed);
    const uint64_t mult = mult_.load(std::memory_order_relaxed);
    const auto slew = static_cast<int64_t>(slew_.load(std::memory_order_relaxed));
    const uint64_t tsc = __builtin_ia32_rdtsc();
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((s & 1) == 0 && mult != 0 && seq_.load(std::memory_order_relaxed) == s) [[likely]]
      return at(tsc, anchor_tsc, anchor_ns, mult, slew);
#endif
    return monotonic_ns();
  }
  // A reading to be converted later: while a line is published, the raw ticks
  // tagged with kTicks (one rdtsc and a load: the staging ring's writers stamp
  // every event with it, and the consumer converts it under the trace lock,
  // ns_of_ticks()); otherwise now_ns(), untagged. The TSC counts from boot, so
  // bit 63 is never a tick's.
  static constexpr uint64_t kTicks = uint64_t{1} << 63;
  uint64_t stamp() const noexcept {
#if defined(__x86_64__)
    if (mult_.load(std::memory_order_relaxed) != 0) [[likely]] return __builtin_ia32_rdtsc() | kTicks;
#endif
    return now_ns();
  }
  // now_ns() as it would have been at `tsc` (a stamp's ticks, untagged): the
  // line published then, which is the current one or, for ticks before its
  // anchor, the one before it (kept by publish()); both agree at the newer
  // one's anchor, so a thread's stamps still convert to times that do not
  // decrease. Ticks older than both lines (a record that waited in the ring
  // through two re-fits, 50 ms apart) are extrapolated back along the older.
  // A stamp read just before a reset (a line that disagreed with
  // CLOCK_MONOTONIC) converts on the line it was read under, as a reading
  // inside now_ns() at that moment would have. Any thread; retries while a
  // line is being written.
  uint64_t ns_of_ticks(uint64_t tsc) const noexcept {
    const Words w = published();
    if (w.whole && tsc >= w.anchor_tsc) [[likely]]
      return at(tsc, w.anchor_tsc, w.anchor_ns, w.mult, w.slew);
    return ns_of_older_ticks(tsc);
  }
  // The published line, read once for a run of conversions (the staged
  // records' consumer converts every record's stamp), as times since
  // `origin`: ns_since(line, tsc) is ns_of_ticks(tsc) - origin. Where the
  // line's slew is all absorbed (at() takes the whole of it: from
  // settled_tsc on, a few hundred µs past a re-fit's anchor) the line is one
  // straight one, so while it is still the published line a conversion is one
  // load of the sequence, a multiply and an add, in place of the line's five
  // sequence-locked loads, their tests and the slew's. Other ticks, and every
  // tick of a line read while none could be (none fitted, or being written:
  // seq kNone never matches), take ns_of_ticks(). The same ns either way.
  struct Line {
    static constexpr uint64_t kNone = ~uint64_t{0};  // a sequence never reached
    uint64_t seq = kNone;
    uint64_t settled_tsc = ~uint64_t{0};
    uint64_t anchor_tsc = 0;
    uint64_t mult = 0;
    uint64_t settled_ns = 0;  // anchor_ns - slew - origin: the straight line's value at its anchor
    uint64_t origin = 0;
  };
  Line line(uint64_t origin) const noexcept {
    Line l;
    l.origin = origin;
    const Words w = published();
    if (!w.whole) return l;
    l.seq = w.seq;
    l.anchor_tsc = w.anchor_tsc;
    l.mult = w.mult;
    l.settled_ns = w.anchor_ns - static_cast<uint64_t>(w.slew) - origin;
    l.settled_tsc = w.anchor_tsc + settling_ticks(w.slew, w.mult, ~uint64_t{0} - w.anchor_tsc);
    return l;
  }
  uint64_t ns_since(const Line& l, uint64_t tsc) const noexcept {
    if (tsc >= l.settled_tsc && seq_.load(std::memory_order_acquire) == l.seq) [[likely]]
      return l.settled_ns + static_cast<uint64_t>((static_cast<unsigned __int128>(tsc - l.anchor_tsc) * l.mult) >> 32);
    return ns_of_ticks(tsc) - l.origin;
  }
  // About how many ticks `ns` lasts on the current line (`ns` itself while
  // none is published).
  uint64_t ticks_in(uint64_t ns) const noexcept {
    const uint64_t mult = mult_.load(std::memory_order_relaxed);
    return mult != 0 ? static_cast<uint64_t>((static_cast<unsigned __int128>(ns) << 32) / mult) : ns;
  }
  // Whether reads go through the TSC now (a fit is published).
  bool fitted() const noexcept { return mult_.load(std::memory_order_acquire) != 0; }

 private:
  static uint64_t at(uint64_t tsc, uint64_t anchor_tsc, uint64_t anchor_ns, uint64_t mult,
                     int64_t slew) noexcept {
    if (tsc <= anchor_tsc) return anchor_ns;  // an older tick than the anchor (another core, a hair early)
    const auto d =
        static_cast<uint64_t>((static_cast<unsigned __int128>(tsc - anchor_tsc) * mult) >> 32);
    const uint64_t room = d >> kSlewShift;  // non-decreasing in d, and at most d / 64
    if (slew >= 0) return anchor_ns + d - (room < static_cast<uint64_t>(slew) ? room : static_cast<uint64_t>(slew));
    return anchor_ns + d + (room < static_cast<uint64_t>(-slew) ? room : static_cast<uint64_t>(-slew));
  }
  // The published line's words, read under the sequence lock; `whole`: a
  // fitted line, not being written while they were read.
  struct Words {
    uint64_t seq, anchor_tsc, anchor_ns, mult;
    int64_t slew;
    bool whole;
  };
  Words published() const noexcept {
    Words w;
    w.seq = seq_.load(std::memory_order_acquire);
    w.anchor_tsc = anchor_tsc_.load(std::memory_order_relaxed);
    w.anchor_ns = anchor_ns_.load(std::memory_order_relaxed);
    w.mult = mult_.load(std::memory_order_relaxed);
    w.slew = static_cast<int64_t>(slew_.load(std::memory_order_relaxed));
    std::atomic_thread_fence(std::memory_order_acquire);
    w.whole = (w.seq & 1) == 0 && w.mult != 0 && seq_.load(std::memory_order_relaxed) == w.seq;
    return w;
  }
  // The ticks past a line's anchor from which at() takes the whole slew (its
  // room, d / 64, is at least |slew|), at most `limit`.
  static uint64_t settling_ticks(int64_t slew, uint64_t mult, uint64_t limit) noexcept {
    const uint64_t owed = slew >= 0 ? static_cast<uint64_t>(slew) : -static_cast<uint64_t>(slew);
    // d >= owed << kSlewShift where (tsc - anchor) * mult >= owed << (32 + kSlewShift).
    const unsigned __int128 need = static_cast<unsigned __int128>(owed) << (32 + kSlewShift);
    const unsigned __int128 ticks = (need + mult - 1) / mult;
    return ticks < limit ? static_cast<uint64_t>(ticks) : limit;
  }
  void publish(uint64_t anchor_tsc, uint64_t anchor_ns, uint64_t mult, int64_t slew) noexcept;
  // ns_of_ticks() for ticks before the current line (or while it is written).
  uint64_t ns_of_older_ticks(uint64_t tsc) const noexcept;

  // Written by calibrate() only.
  bool usable_ = false;
  uint64_t base_tsc_ = 0;
  uint64_t base_ns_ = 0;
  // The published line (sequence-locked: odd while being written).
  alignas(64) std::atomic<uint64_t> seq_{0};
  std::atomic<uint64_t> anchor_tsc_{0};
  std::atomic<uint64_t> anchor_ns_{0};
  std::atomic<uint64_t> mult_{0};  // ns per tick << 32; 0: not fitted
  std::atomic<uint64_t> slew_{0};  // int64_t: ns still to absorb (> 0: the line was ahead)
  // The line published before the current one (mult 0: none), for
  // ns_of_ticks(); written with it, under the same sequence.
  std::atomic<uint64_t> prev_anchor_tsc_{0};
  std::atomic<uint64_t> prev_anchor_ns_{0};
  std::atomic<uint64_t> prev_mult_{0};
  std::atomic<uint64_t> prev_slew_{0};
};

}  // namespace memloupe::recorder
