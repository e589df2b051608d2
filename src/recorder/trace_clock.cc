#include "recorder/trace_clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cstring>

#include "recorder/spin_lock.h"

namespace memloupe::recorder {

// Constant rate in every P-, C- and T-state: cpuid 0x80000007, EDX bit 8.
bool TraceClock::invariant_tsc() noexcept {
#if defined(__x86_64__)
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  return __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d & (1u << 8)) != 0;
#else
  return false;
#endif
}

namespace {

#if defined(__x86_64__)
uint64_t ticks() noexcept { return __builtin_ia32_rdtsc(); }
#else
uint64_t ticks() noexcept { return 0; }
#endif

// An invariant TSC, and the kernel keeps CLOCK_MONOTONIC with it: it checked
// that the cores' TSCs agree, and on a VM that the hypervisor lets it.
bool tsc_usable() noexcept {
  if (!TraceClock::invariant_tsc()) return false;
  char source[32];
  const size_t n = read_file("/sys/devices/system/clocksource/clocksource0/current_clocksource", source,
                             sizeof(source));
  return n >= 3 && std::memcmp(source, "tsc", 3) == 0 && (n == 3 || source[3] == '\n');
}

// A CLOCK_MONOTONIC reading and the ticks just before it and around it: of three
// tries, the one read in the shortest span (the others were interrupted).
struct Pair {
  uint64_t before;  // ticks before the clock read: mono(before) <= ns
  uint64_t mid;     // the best estimate of the ticks at ns
  uint64_t ns;
};
Pair read_pair() noexcept {
  Pair best{};
  uint64_t best_span = ~uint64_t{0};
  for (int i = 0; i < 3; ++i) {
    const uint64_t t0 = ticks();
    const uint64_t ns = monotonic_ns();
    const uint64_t t1 = ticks();
    if (t1 - t0 < best_span) {
      best_span = t1 - t0;
      best = {t0, t0 + (t1 - t0) / 2, ns};
    }
  }
  return best;
}

uint64_t to_mult(double ns_per_tick) noexcept {
  const double m = ns_per_tick * 4294967296.0;
  return m < 1.0 ? 1 : m > 1.8e19 ? ~uint64_t{0} : static_cast<uint64_t>(m);
}

}  // namespace

void TraceClock::start(bool force_usable) noexcept {
  // Single-threaded here (session start, or a fork child's restart): a sequence
  // left odd by a parent's flush thread caught mid-publish is simply reset.
  seq_.store(0, std::memory_order_relaxed);
  publish(0, 0, 0, 0);
  prev_mult_.store(0, std::memory_order_relaxed);  // a parent's line is no line of this session
  usable_ = force_usable || tsc_usable();
  const Pair p = read_pair();
  base_tsc_ = p.mid;
  base_ns_ = p.ns;
}

void TraceClock::calibrate() noexcept {
  if (!usable_) return;
  const Pair p = read_pair();
  if (p.mid <= base_tsc_) {  // the TSC went back: start over
    base_tsc_ = p.mid;
    base_ns_ = p.ns;
    publish(0, 0, 0, 0);
    return;
  }
  if (p.ns < base_ns_ + kMinBaselineNs) return;
  const double rate = static_cast<double>(p.ns - base_ns_) / static_cast<double>(p.mid - base_tsc_);
  const uint64_t mult = mult_.load(std::memory_order_relaxed);
  if (mult == 0) {
    // Anchored at the ticks read before the clock: the line starts at or just
    // above CLOCK_MONOTONIC, so no thread's reading steps back at the switch.
    publish(p.before, p.ns, to_mult(rate), 0);
    return;
  }
  const uint64_t old_tsc = anchor_tsc_.load(std::memory_order_relaxed);
  const uint64_t old_ns = anchor_ns_.load(std::memory_order_relaxed);
  const auto old_slew = static_cast<int64_t>(slew_.load(std::memory_order_relaxed));
  const auto error = static_cast<int64_t>(at(p.mid, old_tsc, old_ns, mult, old_slew) - p.ns);  // > 0: ahead
  if (error > static_cast<int64_t>(kMaxErrorNs) || error < -static_cast<int64_t>(kMaxErrorNs)) {
    base_tsc_ = p.mid;
    base_ns_ = p.ns;
    publish(0, 0, 0, 0);
    return;
  }
  // Anchored at a tick read just now, where the old line stands, so that
  // readers still on the old line (until publish() below) cannot have gone
  // further along it than the new one starts; one ns above it, for a reader
  // a hair past this tick that rounded up where this rounds down.
  const uint64_t now = ticks();
  const uint64_t start = at(now, old_tsc, old_ns, mult, old_slew) + 1;
  publish(now, start, to_mult(rate), error + 1);
}

void TraceClock::publish(uint64_t anchor_tsc, uint64_t anchor_ns, uint64_t mult, int64_t slew) noexcept {
  const uint64_t s = seq_.load(std::memory_order_relaxed);
  seq_.store(s + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  if (const uint64_t old_mult = mult_.load(std::memory_order_relaxed); old_mult != 0) {
    prev_anchor_tsc_.store(anchor_tsc_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    prev_anchor_ns_.store(anchor_ns_.load(std::memory_order_relaxed), std::memory_order_relaxed);
    prev_mult_.store(old_mult, std::memory_order_relaxed);
    prev_slew_.store(slew_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  }
  anchor_tsc_.store(anchor_tsc, std::memory_order_relaxed);
  anchor_ns_.store(anchor_ns, std::memory_order_relaxed);
  mult_.store(mult, std::memory_order_relaxed);
  slew_.store(static_cast<uint64_t>(slew), std::memory_order_relaxed);
  seq_.store(s + 2, std::memory_order_release);
}

uint64_t TraceClock::ns_of_older_ticks(uint64_t tsc) const noexcept {
  for (;;) {
    // A line being written: its writer (the flush thread) is a few stores from
    // done, unless it was preempted there, so after a few spins this yields
    // (valgrind runs one thread at a time).
    spin_then_yield([this] { return (seq_.load(std::memory_order_acquire) & 1) == 0; });
    const uint64_t s = seq_.load(std::memory_order_acquire);
    const uint64_t anchor_tsc = anchor_tsc_.load(std::memory_order_relaxed);
    const uint64_t anchor_ns = anchor_ns_.load(std::memory_order_relaxed);
    const uint64_t mult = mult_.load(std::memory_order_relaxed);
    const auto slew = static_cast<int64_t>(slew_.load(std::memory_order_relaxed));
    const uint64_t prev_tsc = prev_anchor_tsc_.load(std::memory_order_relaxed);
    const uint64_t prev_ns = prev_anchor_ns_.load(std::memory_order_relaxed);
    const uint64_t prev_mult = prev_mult_.load(std::memory_order_relaxed);
    const auto prev_slew = static_cast<int64_t>(prev_slew_.load(std::memory_order_relaxed));
    std::atomic_thread_fence(std::memory_order_acquire);
    if ((s & 1) != 0 || seq_.load(std::memory_order_relaxed) != s) continue;
    if (mult != 0 && tsc >= anchor_tsc) return at(tsc, anchor_tsc, anchor_ns, mult, slew);
    if (prev_mult != 0 && tsc >= prev_tsc) return at(tsc, prev_tsc, prev_ns, prev_mult, prev_slew);
    // Older than the lines kept: back along the oldest one.
    const uint64_t base_tsc = prev_mult != 0 ? prev_tsc : anchor_tsc;
    const uint64_t base_ns = prev_mult != 0 ? prev_ns : anchor_ns;
    const uint64_t m = prev_mult != 0 ? prev_mult : mult;
    if (m == 0) return monotonic_ns();  // no line at all: not a stamp of this session
    const auto back = static_cast<uint64_t>((static_cast<unsigned __int128>(base_tsc - tsc) * m) >> 32);
    return back < base_ns ? base_ns - back : 0;
  }
}

}  // namespace memloupe::recorder
