// The process-wide session: the one trace being written and the state every
// part of the recorder reads. Data and reads only; what changes the state
// (start, end, fork restart) is recorder.h, which sits above the parts that
// read it (the event path, the module map, the flush thread), so that their
// includes all point down to here.
//
//   Uninit ──first hook──► Off                (MEMLOUPE_OUTPUT unset: pass-through)
//                     └──► Recording ◄──► Paused   (memloupe_stop / memloupe_start)
//                              │            │
//                              └─────┬──────┘
//                                    ▼
//                                  Ended      (exit, exec, I/O failure, fork child)
//
// Ended is final for this process image: the trace got its TraceEnd (or the
// failure was reported) and every hook passes through from then on.
#pragma once

#include <atomic>
#include <cstdint>

#include "format/encoder.h"
#include "recorder/address_table.h"
#include "recorder/config.h"
#include "recorder/flush_wake.h"
#include "recorder/sample_filter.h"
#include "recorder/spin_lock.h"
#include "recorder/staging_ring.h"
#include "recorder/thread_registry.h"
#include "recorder/trace_clock.h"
#include "recorder/trace_output.h"

namespace memloupe::recorder {

enum class State : uint8_t { Uninit, Off, Recording, Paused, Ended };

// Address table values: the AllocId, plus whether the program's callback wants
// the free, plus whether the block is a mapping (mmap, the program break) rather
// than an allocator's block: a heap snapshot must not ask malloc_usable_size
// about a mapping (it reads a chunk header that is not there).
inline constexpr uint64_t kNotifyFree = uint64_t{1} << 63;
inline constexpr uint64_t kMappedBlock = uint64_t{1} << 62;
inline constexpr uint64_t kIdMask = kMappedBlock - 1;
inline constexpr uint64_t table_value(uint64_t id, format::Func f) {
  return id | (format::func_maps(f) ? kMappedBlock : 0);
}

// Written only under `lock` (the trace lock): the encoder, the table, the filter.
struct Session {
  SpinLock lock;
  AddressTable table;
  TraceOutput output;
  // --all mode: calls recorded but not yet encoded (staging_ring.h); inactive in
  // sampled mode, where events are rare and encoded at once.
  StagingRing staging;
  // --all mode: held by a realloc of a recorded block from before the real call
  // until its event is in the order; an allocation that returned the address
  // the holder gives up (`realloc_old`, written by the holder once it holds the
  // lock) waits while it is held (event_path.h, wait_for_reallocs).
  SpinLock realloc_lock;
  std::atomic<uint64_t> realloc_old{0};
  // CLOCK_MONOTONIC through the TSC where that is safe; the flush thread fits it.
  TraceClock clock;
  // Asks the flush thread to drain the output before its period is up.
  FlushWake flush_wake;
  uint64_t start_mono_ns = 0;
  uint32_t pid = 0;
  // Constant-initialised, so the first start_session() only binds it to `output`.
  // Events written directly go through trace_encoder() (event_path.h), which
  // keeps them in order with the staged ones; this one is for the staged
  // records' consumer and for starting and resetting the encoder.
  format::Encoder encoder_;

  format::Encoder& raw_encoder() noexcept { return encoder_; }
};

// Constant-initialised and never destroyed: exit handlers and other threads use
// the session after static destructors would have run (unmapping the table under
// a thread that is still freeing would crash it).
template <class T>
union NoDestructor {
  constexpr NoDestructor() : value() {}
  ~NoDestructor() {}
  T value;
};

extern Session& g_session;
extern constinit SampleFilter g_filter;
extern constinit ThreadRegistry g_threads;

// Read on every slow path (several times per call in --all mode), so inline.
namespace detail {
extern std::atomic<State> g_state;
// Written once per session start (recorder.cc), before the state leaves Uninit.
extern constinit Config g_config;
// One page that a fork child sees zeroed (MADV_WIPEONFORK, Linux 4.14): it tells
// "the process that owns the session" from any child, with one load. Where the
// kernel lacks it, the pid is compared instead (a syscall, slow paths only).
extern volatile uint8_t* g_alive_page;
extern bool g_alive_wipes;
bool pid_is_session_owner() noexcept;
// Where the alive page keeps the lean gate (below), past its first byte.
inline constexpr size_t kLeanGateOffset = 8;
}  // namespace detail

inline State state() noexcept { return detail::g_state.load(std::memory_order_acquire); }
inline const Config& config() noexcept { return detail::g_config; }

// Every change of the state goes through here: it keeps the lean gate's
// Recording bit (below) in step.
void set_state(State s) noexcept;

// --all mode's lean gate: one word that says, with one load and compare, what
// the slow paths asked with ~30 instructions of tests on every call (record.cc,
// records_every_call): every call is recorded through the staging ring. It is
// kLeanOpen while
//   kLeanRing        the session is in --all mode with its ring mapped,
//   kLeanRecording   the state is Recording (not paused, not ended),
//   kLeanNoCallback  no program callback wants ids at once (callbacks.h),
// and it lives in the alive page, which a fork child that our handler did not
// see finds zeroed: there the gate is shut as in_traced_process() is false.
// Where the kernel cannot wipe the page the hooks read a word that stays 0,
// and every call takes the general branch.
//
// Each condition's writer changes its variable (sequentially consistent) and
// then calls sync_lean_bit, which sets or clears the bit and reads the
// condition again until what it wrote agrees with what it then reads: whatever
// the interleaving of writers, the last bit operation's writer read the
// condition after the last change to it (both are in the one sequentially
// consistent order), so the bit ends equal to its condition. A call already
// past the gate when the condition changes is recorded as one racing the
// change, as with the tests it replaces, and the consumer asks the state
// again (event_path.cc, apply_as).
inline constexpr uint32_t kLeanRing = 1;
inline constexpr uint32_t kLeanRecording = 2;
inline constexpr uint32_t kLeanNoCallback = 4;
inline constexpr uint32_t kLeanOpen = kLeanRing | kLeanRecording | kLeanNoCallback;
void sync_lean_bit(uint32_t bit, bool (*holds)() noexcept) noexcept;
namespace detail {
// The word the hooks read: a constant 0, or the alive page's gate once the
// page is known to be wiped in a fork child (recorder.cc, init_alive_page).
extern std::atomic<const uint32_t*> g_lean_gate;
}  // namespace detail
[[gnu::always_inline]] inline bool lean_gate_open() noexcept {
  return __atomic_load_n(detail::g_lean_gate.load(std::memory_order_relaxed), __ATOMIC_ACQUIRE) == kLeanOpen;
}

// Trace time: nanoseconds since the session started (every recorded call reads it).
inline uint64_t trace_now_ns() noexcept { return g_session.clock.now_ns() - g_session.start_mono_ns; }
// An event's time as its slow path reads it (StagedRecord::time_ns): raw ticks
// tagged TraceClock::kTicks while the clock's line is published, else trace
// ns. The program's threads only read the TSC; whoever applies the record
// converts it (trace_ns_of, under the trace lock) with the line published
// when it was read (docs/RECORDER.md, "The writers' side in --all mode").
// ring_stamp(): the stamp of a record for the staging ring (a caller that
// knows the ring is mapped: the lean gate is open).
[[gnu::always_inline]] inline uint64_t ring_stamp() noexcept {
  const uint64_t s = g_session.clock.stamp();
  return s & TraceClock::kTicks ? s : s - g_session.start_mono_ns;
}
[[gnu::always_inline]] inline uint64_t trace_stamp() noexcept {
  // Without the ring (sampled mode) records are applied at once: ns, read
  // before the trace lock rather than converted under it.
  if (!g_session.staging.active()) return trace_now_ns();
  return ring_stamp();
}
inline uint64_t trace_ns_of(uint64_t stamp) noexcept {
  if (!(stamp & TraceClock::kTicks)) return stamp;
  return g_session.clock.ns_of_ticks(stamp & ~TraceClock::kTicks) - g_session.start_mono_ns;
}
// trace_ns_of() for a run of stamps (a drain of the staging ring): the clock's
// line and the session's start read once (TraceClock::Line). Per stamp, the
// line's conversion had been ~31 instructions on bench_alloc_mt's records;
// ~11 this way (docs/RECORDER.md, "The flush thread per record, 2026-11-26
// (eighth round)", second pass).
class StampConverter {
 public:
  StampConverter() noexcept : line_(g_session.clock.line(g_session.start_mono_ns)) {}
  uint64_t operator()(uint64_t stamp) const noexcept {
    if (!(stamp & TraceClock::kTicks)) return stamp;
    return g_session.clock.ns_since(line_, stamp & ~TraceClock::kTicks);
  }

 private:
  TraceClock::Line line_;
};

// False in a child created without our fork handler running (vfork, raw clone,
// or fork before our constructor): such a child must not touch the shared
// session, so every slow path passes through there.
inline bool in_traced_process() noexcept {
  if (detail::g_alive_page == nullptr) return true;  // no session was ever started
  if (detail::g_alive_wipes) return *detail::g_alive_page != 0;
  return detail::pid_is_session_owner();
}

// True when new allocations are sampled / when frees of recorded blocks are;
// the _in forms for a caller that has asked in_traced_process() (`traced`)
// already, which cannot change while it runs: the staged records' consumer
// asks once per drain, not twice per record (~8 instructions each).
// (in_traced_process() last: a syscall where the kernel cannot wipe a page.)
inline bool tracks(State s) noexcept { return s == State::Recording || s == State::Paused; }
inline bool sampling_in(bool traced) noexcept { return state() == State::Recording && traced; }
inline bool tracking_in(bool traced) noexcept { return tracks(state()) && traced; }
inline bool sampling() noexcept { return state() == State::Recording && in_traced_process(); }
inline bool tracking() noexcept { return tracks(state()) && in_traced_process(); }

// Frames per backtrace: MEMLOUPE_DEPTH at start, memloupe_set_depth() later.
// Read on the sampled slow path only.
namespace detail {
extern std::atomic<uint32_t> g_depth;
}
inline uint32_t backtrace_depth() noexcept { return detail::g_depth.load(std::memory_order_relaxed); }
inline void set_backtrace_depth(uint32_t depth) noexcept { detail::g_depth.store(depth, std::memory_order_relaxed); }

// Mean bytes between samples: MEMLOUPE_EVERY at the session's start,
// memloupe_set_rate() later (which records each change in the trace). Read on
// the sampled slow path only; a thread's pending gap keeps the mean it was drawn
// with (ThreadState::gap_mean) until its next sample point (record.cc, decide()).
namespace detail {
extern std::atomic<uint64_t> g_every;
}
inline uint64_t sampling_mean() noexcept { return detail::g_every.load(std::memory_order_relaxed); }
inline void set_sampling_mean(uint64_t every) noexcept { detail::g_every.store(every, std::memory_order_relaxed); }

// memloupe_start()/memloupe_stop().
bool set_paused(bool paused) noexcept;

}  // namespace memloupe::recorder
