// Per-thread recorder state: the sampling countdown the hooks' fast path tests,
// and the thread's slot of exact call counters.
//
// `t_state` is constinit thread_local with initial-exec TLS: reading it is one
// %fs-relative load, with no TLS initialisation call on any path (the preload
// library is loaded at start-up, so its TLS is in the static block).
//
// The countdown doubles as the "go slow" switch. Fast paths run only when
//   malloc family:  (countdown -= size) > 0
//   free family:    countdown >= kSlowBelow
// so parking the countdown at kParked sends every hook of this thread to its slow
// path, which then looks at `phase`. That one value covers: a thread not yet seen
// (Fresh), a thread inside the recorder (InHook: the reentrancy guard), a thread
// past its exit, and --all mode (every call is recorded). kNever makes the slow
// path unreachable (~4 EiB away) once recording is off for good.
#pragma once

#include <atomic>
#include <cstdint>

#include "format/funcs.h"
#include "recorder/random.h"
#include "recorder/sampler.h"
#include "recorder/staging_ring.h"
#include "recorder/tls_model.h"

namespace memloupe::recorder {

inline constexpr int64_t kParked = -(int64_t{1} << 62);
inline constexpr int64_t kSlowBelow = -(int64_t{1} << 61);
inline constexpr int64_t kNever = int64_t{1} << 62;

// Exact per-function totals of one thread. Single writer (the owning thread),
// read concurrently by the flush thread with relaxed atomic loads (read()).
//
// The writer adds with one memory-destination instruction instead of a locked
// read-modify-write (~20 cycles on every malloc) or a load/add/store triple: it
// needs no atomicity against other threads, and a signal handler on the same
// thread cannot land inside a single instruction.
struct Counters {
  uint64_t calls[format::kFuncCount] = {};
  uint64_t bytes[format::kFuncCount] = {};

  static void bump(uint64_t& counter, uint64_t n) noexcept {
#if defined(__x86_64__)
    asm("addq %1, %0" : "+m"(counter) : "er"(n));
#else
    __atomic_store_n(&counter, __atomic_load_n(&counter, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#endif
  }
  static uint64_t read(const uint64_t& counter) noexcept {
    return __atomic_load_n(&counter, __ATOMIC_RELAXED);
  }
  // Only for a counter nobody else is writing (a fork child's reset).
  static void clear(uint64_t& counter) noexcept { __atomic_store_n(&counter, 0, __ATOMIC_RELAXED); }

  void add(format::Func f, uint64_t n) noexcept {
    bump(calls[static_cast<unsigned>(f)], 1);
    bump(bytes[static_cast<unsigned>(f)], n);
  }
  void add_call(format::Func f) noexcept { bump(calls[static_cast<unsigned>(f)], 1); }
};

// A thread's entry in the registry (thread_registry.h). Slots are reused after a
// thread exits, counters and all: totals are sums over slots, so a slot's counts
// never need folding anywhere.
struct ThreadSlot {
  std::atomic<uint32_t> claimed{0};
  uint32_t os_tid = 0;
  uint32_t thread_id = 0;      // format::ThreadId value, valid when `announced`
  bool announced = false;      // ThreadStart written to the trace
  uintptr_t pthread = 0;       // pthread_self() of the owner
  Counters counters;
  StagedFrames staged;         // --all mode: the last backtrace staged (staging_ring.h)
};

enum class Phase : uint8_t {
  Fresh,   // no hook has run on this thread yet
  Active,  // registered; fast paths allowed
  InHook,  // inside the recorder: nested calls pass straight through
  Exited,  // past its exit handler: pass straight through
};

// Counts of threads that are not (or no longer) registered land here; nobody reads
// them. Keeps the fast path free of null checks.
inline constinit ThreadSlot g_unregistered_slot;

struct ThreadState {
  int64_t countdown = kParked;
  ThreadSlot* slot = &g_unregistered_slot;
  Phase phase = Phase::Fresh;
  uint8_t exit_rounds = 0;
  float offset = 0;  // Gap::offset of the pending sample point
  Rng rng;
  uint64_t gap_mean = 0;  // the mean the pending gap was drawn with (0: none drawn yet)

  Gap gap() const noexcept { return {countdown, offset}; }
  void set_gap(Gap g) noexcept { countdown = g.countdown, offset = g.offset; }
};

inline constinit thread_local ThreadState t_state
    MEMLOUPE_TLS_MODEL;

// The reentrancy guard: while alive, every hook this thread calls passes straight
// through, unrecorded and uncounted (the recorder's own allocations, dlsym's,
// pthread_create's). Restores the thread's phase and countdown afterwards.
class HooksParked {
 public:
  explicit HooksParked(ThreadState& t) noexcept : t_(t), phase_(t.phase), gap_(t.gap()) {
    t.phase = Phase::InHook;
    t.countdown = kParked;
  }
  ~HooksParked() {
    t_.phase = phase_;
    t_.set_gap(gap_);
  }
  HooksParked(const HooksParked&) = delete;
  HooksParked& operator=(const HooksParked&) = delete;

 private:
  ThreadState& t_;
  Phase phase_;
  Gap gap_;
};

}  // namespace memloupe::recorder
