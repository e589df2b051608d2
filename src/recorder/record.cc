// The hooks' slow paths: thread registration, the sampling decision, and putting
// sampled allocations, frees and reallocations into the trace.
//
// Every call that is recorded goes on to the one event path (event_path.h),
// which keeps the trace's order and holds --all mode's difference; here are the
// parts before it: whether the call is recorded, its backtrace, the program's
// errno, and the program's callbacks afterwards, outside the lock.
//
// Invariants:
//  - Unwinding, module sync and reading the clock happen before the trace lock.
//  - The recorder's own calls into libc happen with the thread's hooks parked.
//  - The order of real calls and events: event_path.h.
#include "recorder/record.h"

#include <cerrno>
#include <cstring>
#include <optional>
#include <span>

#include "recorder/callbacks.h"
#include "recorder/event_path.h"
#include "recorder/modules.h"
#include "recorder/real_funcs.h"
#include "recorder/recorder.h"
#include "recorder/session.h"
#include "recorder/sys.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder {
namespace {

// At most this many innermost frames are the recorder's own (dropped).
constexpr size_t kOwnFramesMax = 8;

struct Decision {
  uint32_t n_samples;
  Gap next;
  // The rate changed (memloupe_set_rate) while this thread's pending gap,
  // drawn at the old mean, ran: this block was sampled at that mean (0: at
  // the current one). Its record is bracketed by RateChange events (event_path.cc).
  uint64_t stale_mean = 0;
};

// `after` is the countdown minus this call's size (<= 0 unless a signal handler
// drew a new gap in between).
Decision decide(ThreadState& t, int64_t after, uint64_t size) noexcept {
  const auto before = static_cast<int64_t>(static_cast<uint64_t>(after) + size);
  if (!in_traced_process()) return {0, {before, t.offset}};  // leave a vfork parent's state alone
  const State s = state();
  if (s != State::Recording && s != State::Paused) return {0, {kNever, 0}};
  const bool live = s == State::Recording;
  if (config().mode == format::Mode::All) return {live ? 1u : 0u, {kParked, 0}};
  if (after > 0) return {0, {after, t.offset}};
  const uint64_t now_mean = sampling_mean();
  const uint64_t gap_mean = t.gap_mean != 0 ? t.gap_mean : now_mean;
  const uint32_t n = samples_in_block(t.rng, static_cast<double>(gap_mean), {before, t.offset}, size);
  t.gap_mean = now_mean;
  return {live ? n : 0, next_gap(t.rng, static_cast<double>(now_mean)), gap_mean != now_mean ? gap_mean : 0};
}

// Raw return addresses from the hook's caller outwards, unwound into `buf` from
// the hook's cold entry (r.start): the innermost frames that lie in this library
// (a hook that called the cold entry rather than jumping to it) are left out,
// however the compiler inlined or tail-called them. The result is a view into
// `buf` (no copy). The unwinder also tells the thread's staging copy
// (`staged.next`) what it knows of the outer frames this backtrace shares with
// earlier ones, which holds unless the depth limit cut them.
std::span<const uint64_t> capture_backtrace(const AllocRequest& r, uint64_t* buf, StagedFrames& staged) noexcept {
  const size_t depth = backtrace_depth();
  if (depth == 0) {
    staged.next = {};
    return {};
  }
  const size_t n = unwind_from(*r.start, buf, depth + kOwnFramesMax, &staged.next);
  const CodeRange own = own_code_range();
  size_t first = 0;
  while (first < n && first < kOwnFramesMax && own.contains(buf[first])) ++first;
  if (n - first > depth) [[unlikely]] {
    staged.next = {};
    return {buf + first, depth};
  }
  // Otherwise only inner frames were dropped: the walk's outer frames are the
  // backtrace's (the ring bounds `outer` by both backtraces' lengths).
  return {buf + first, n - first};
}

// The record of the block `p` that request `r` returned.
StagedRecord block_record(StagedKind kind, const ThreadState& t, const AllocRequest& r, void* p,
                          uint64_t now) noexcept {
  StagedRecord rec = call_record(kind, *t.slot, r.func, now);
  rec.address = reinterpret_cast<uintptr_t>(p);
  rec.size = r.size;
  rec.alignment = r.alignment;
  return rec;
}

// After an event, outside the lock: the table's failure, the flush thread's
// wake and the program's callbacks.
void after_event(const Applied& a, const SampledBlock& block) noexcept {
  if (!a.stored) {
    (LogLine() << "out of memory for the table of recorded blocks; recording disabled").emit();
    end_session(format::EndReason::Stopped);
    return;
  }
  if (!a.id) return;
  if (g_session.output.half_full()) g_session.flush_wake.wake();
  if (has_alloc_callback() && notify_alloc(block)) {
    LockGuard g(g_session.lock);
    const auto key = reinterpret_cast<uintptr_t>(block.address);
    if (g_session.table.take(key))
      (void)g_session.table.insert(key, table_value(block.id, block.func) | kNotifyFree);
  }
}

void* pass_through(const AllocRequest& r, RealCall call) noexcept {
  if (real_funcs_resolved()) return call();
  return bootstrap::allocate(r.size, r.alignment);  // dlsym's calloc, before we know the real one
}

// realloc of a bootstrap-pool block: move it into real memory.
void* realloc_from_pool(void* old, uint64_t size) noexcept {
  void* p = real_funcs_resolved() ? g_real.malloc(size) : bootstrap::allocate(size, 0);
  if (p != nullptr) {
    const size_t n = bootstrap::usable_size(old);
    std::memcpy(p, old, n < size ? n : size);
  }
  return p;
}

// Takes this thread's countdown and leaves kParked in its place, as one step
// against the thread's own signal handlers (nobody else writes it: other threads
// never touch another's t_state).
//
// Not `xchg` with memory: it always locks the bus and drains the store buffer
// (in --all mode every call comes here; measured gain small, docs/RECORDER.md,
// "The slow paths' entry"). A signal handler can
// only run between two instructions, so one read-modify-write instruction
// without a lock prefix is enough: `cmpxchg` of the value just loaded. If a
// handler ran between the load and it (the handler's call went through a slow
// path and left a new gap), it fails and loads what the handler left (one more
// turn); if it succeeds, no handler changed the value in between, or one left
// exactly the value loaded, which means the same to the caller. An x86 interrupt
// lands on an instruction boundary, never inside the cmpxchg itself.
[[gnu::always_inline]] inline int64_t take_countdown(ThreadState& t) noexcept {
#if defined(__x86_64__)
  int64_t seen = t.countdown;
  asm volatile("1: cmpxchgq %2, %0\n\tjne 1b" : "+m"(t.countdown), "+a"(seen) : "r"(kParked) : "cc");
  return seen;
#else
  return __atomic_exchange_n(&t.countdown, kParked, __ATOMIC_RELAXED);
#endif
}

// enter() for a thread that is not Active: registers a Fresh one.
[[gnu::noinline]] bool enter_cold(ThreadState& t, uint64_t size, int64_t& after) noexcept {
  if (t.phase != Phase::Fresh) return false;
  t.phase = Phase::InHook;
  activate_thread(t);
  after = static_cast<int64_t>(static_cast<uint64_t>(t.countdown) - size);
  t.phase = Phase::InHook;
  t.countdown = kParked;
  return true;
}

// Entry of the allocating slow paths. Parks the thread (phase InHook, countdown
// kParked) for the whole slow path and returns the countdown minus `size` as the
// fast path left it in `after`; false if the thread must pass through (it is
// inside the recorder already, or exited). Registers a Fresh thread on the way.
//
// The countdown is taken in one step (take_countdown), not loaded: a signal
// handler's malloc between the fast path's subtraction and here either sees us
// parked (and passes through) or has finished (we then see the gap it drew and
// treat this call as unsampled). Inlined, and no std::optional: gcc built one
// on the stack with a byte store and read it back with a wider load, a
// store-forwarding stall on every call.
[[gnu::always_inline]] inline bool enter(ThreadState& t, uint64_t size, int64_t& after) noexcept {
  after = take_countdown(t);
  if (t.phase == Phase::Active) [[likely]] {
    t.phase = Phase::InHook;
    return true;
  }
  return enter_cold(t, size, after);
}

// --all mode while recording through the staging ring with no callback, on a
// thread the trace has announced: every call is recorded with one sample, so
// there is no sampling decision, no gap or rate to keep and no free filter to
// ask, the countdown stays parked, and the record goes into the ring. The slow
// paths take a lean branch then (decide() and gap_for_next_call() cost ~60
// instructions a call there, to answer what this test says); everything else
// (sampled mode, a paused or ended session, a callback, a fork child our
// handler did not see, a thread not yet announced) takes the general branch.
// The lean gate (session.h) folds the process-wide tests into one load and
// compare, kept up to date by whoever changes them (a pause, the session's
// end, a callback's registration; a fork child finds it wiped): the tests
// it replaces were ~30 instructions a call. Sampled mode pays this test on
// its slow paths only (a sampled call, a free the filter could not rule out).
[[gnu::always_inline]] inline bool records_every_call(const ThreadSlot& slot) noexcept {
  return lean_gate_open() && slot.announced;
}

void leave(ThreadState& t, Gap next) noexcept {
  t.phase = Phase::Active;
  t.set_gap(next);
}

// The program's errno across a slow path: the recorder's own work (an unwinder
// probing memory, say) must not show through, the real function's result
// (ENOMEM on failure) must.
class ErrnoKeeper {
 public:
  ErrnoKeeper() noexcept : value_(errno) {}
  ~ErrnoKeeper() { errno = value_; }
  ErrnoKeeper(const ErrnoKeeper&) = delete;
  ErrnoKeeper& operator=(const ErrnoKeeper&) = delete;

  template <class Call>
  void* real(Call call) noexcept {
    errno = value_;
    void* p = call();
    value_ = errno;
    return p;
  }
  void real_free(void* p) noexcept {
    errno = value_;
    g_real.free(p);
    value_ = errno;
  }

 private:
  int value_;
};

// allocate_slow's lean branch (records_every_call): the same steps as its
// sampled branch with one sample and no stale mean.
[[gnu::always_inline]] inline void* allocate_all(const ThreadState& t, const AllocRequest& r, RealCall call,
                                                 ErrnoKeeper& program_errno) noexcept {
  ThreadSlot& slot = *t.slot;
  const uint64_t now = ring_stamp();
  sync_modules_if_due(now);
  uint64_t frames[format::Encoder::kMaxFrames + kOwnFramesMax];
  const std::span<const uint64_t> bt = capture_backtrace(r, frames, slot.staged);
  void* const p = program_errno.real(call);
  if (p != nullptr)
    stage_alloc(slot, block_record(StagedKind::Alloc, t, r, p, now), bt, [&](const Applied& a) {
      after_event(a, {0, 1, r.func, r.size, p, bt});  // the table's failure (staged: no id)
    });
  return p;
}

}  // namespace

void* allocate_slow(const AllocRequest& r, RealCall call) noexcept {
  ThreadState& t = t_state;
  ErrnoKeeper program_errno;  // from here: registering a thread may touch errno
  int64_t after;
  if (!enter(t, r.size, after)) return program_errno.real([&] { return pass_through(r, call); });
  t.slot->counters.add(r.func, r.size);
  if (records_every_call(*t.slot)) {
    void* const p = allocate_all(t, r, call, program_errno);
    leave(t, {kParked, 0});
    return p;
  }
  const Decision d = decide(t, after, r.size);
  void* p;
  if (d.n_samples == 0) {
    p = program_errno.real(call);
  } else {
    const uint64_t now = trace_stamp();
    sync_modules_if_due(now);
    uint64_t frames[format::Encoder::kMaxFrames + kOwnFramesMax];
    const std::span<const uint64_t> bt = capture_backtrace(r, frames, t.slot->staged);
    p = program_errno.real(call);
    if (p != nullptr)
      record_alloc(*t.slot, block_record(StagedKind::Alloc, t, r, p, now), bt, {d.n_samples, d.stale_mean},
                   [&](const Applied& a) {
                     after_event(a, {a.id ? a.id->value : 0, d.n_samples, r.func, r.size, p, bt});
                   });
  }
  leave(t, d.next);
  return p;
}

namespace {

// The frees' slow path; `real_free`: also free `p` (release_slow), or leave it
// to the caller (forget_slow). Inlined into both.
[[gnu::always_inline]] inline void end_block_slow(Func f, void* p, bool counted, bool real_free) noexcept {
  if (bootstrap::owns(p)) return;  // never came from the real allocator
  ThreadState& t = t_state;
  ErrnoKeeper program_errno;
  Gap next = t.gap();
  bool every_call = false;  // records_every_call: the lean branch
  if (counted) {  // from the fast path: Active, the filter's summary bit said "maybe"
    t.phase = Phase::InHook;
    t.countdown = kParked;
  } else {  // parked countdown: Fresh, inside the recorder, exited, or --all mode
    int64_t after;
    if (!enter(t, 0, after)) {
      if (real_free && real_funcs_resolved()) program_errno.real_free(p);
      return;
    }
    t.slot->counters.add_call(f);
    every_call = records_every_call(*t.slot);
    next = every_call ? Gap{kParked, 0} : after < kSlowBelow ? gap_for_next_call(t) : Gap{after, t.offset};
  }
  const auto after_free = [p](const Applied& a) {
    if (a.ended && (*a.ended & kNotifyFree)) notify_free(*a.ended & kIdMask, p);
    if (!a.stored) after_event(a, {});
  };
  if (p != nullptr) {
    if (every_call) stage_free(*t.slot, f, p, after_free);
    else record_free(*t.slot, f, p, after_free);
  }
  if (real_free) program_errno.real_free(p);
  leave(t, next);
}

// reallocate_slow's lean branch (records_every_call): the same steps as its
// general branch with one sample, no stale mean, and the old block maybe
// recorded (no free filter in --all mode).
[[gnu::always_inline]] inline void* reallocate_all(const ThreadState& t, const AllocRequest& r, void* old,
                                                   RealCall call, ErrnoKeeper& program_errno) noexcept {
  ThreadSlot& slot = *t.slot;
  const uint64_t now = ring_stamp();
  sync_modules_if_due(now);
  uint64_t frames[format::Encoder::kMaxFrames + kOwnFramesMax];
  const std::span<const uint64_t> bt = capture_backtrace(r, frames, slot.staged);
  StagedRecord block = block_record(StagedKind::Realloc, t, r, nullptr, now);
  block.old_address = reinterpret_cast<uintptr_t>(old);
  return stage_realloc(slot, block, bt, [&] { return program_errno.real(call); }, [&](const Applied& a) {
    after_event(a, {0, 1, r.func, r.size, reinterpret_cast<void*>(block.address), bt});  // the table's failure
  });
}

}  // namespace

void release_slow(Func f, void* p, bool counted) noexcept { end_block_slow(f, p, counted, true); }
void forget_slow(Func f, void* p, bool counted) noexcept { end_block_slow(f, p, counted, false); }

void* reallocate_slow(const AllocRequest& r, void* old, RealCall call) noexcept {
  if (bootstrap::owns(old)) return realloc_from_pool(old, r.size);
  ThreadState& t = t_state;
  ErrnoKeeper program_errno;
  int64_t after;
  if (!enter(t, r.size, after)) return program_errno.real(call);  // `old` came from the real allocator: it is known
  t.slot->counters.add(r.func, r.size);
  if (records_every_call(*t.slot)) {
    void* const p = reallocate_all(t, r, old, call, program_errno);
    leave(t, {kParked, 0});
    return p;
  }
  const Decision d = decide(t, after, r.size);
  const uint64_t now = trace_stamp();
  uint64_t frames[format::Encoder::kMaxFrames + kOwnFramesMax];
  std::span<const uint64_t> bt;
  if (d.n_samples != 0) {
    sync_modules_if_due(now);
    bt = capture_backtrace(r, frames, t.slot->staged);
  }
  StagedRecord block = block_record(StagedKind::Realloc, t, r, nullptr, now);
  block.old_address = reinterpret_cast<uintptr_t>(old);
  block.sampled = d.n_samples != 0;
  auto real = [&] { return program_errno.real(call); };
  Applied a;
  void* const p = record_realloc(*t.slot, block, bt, {d.n_samples, d.stale_mean}, RealCall(real), a);
  if (a.ended && (*a.ended & kNotifyFree)) notify_free(*a.ended & kIdMask, old);
  after_event(a, {a.id ? a.id->value : 0, d.n_samples, r.func, r.size, p, bt});
  leave(t, d.next);
  return p;
}

ThreadSlot* current_thread_slot() noexcept {
  ThreadState& t = t_state;
  if (t.phase == Phase::Fresh) {
    t.phase = Phase::InHook;
    activate_thread(t);  // leaves it Active with its first gap
  }
  return t.slot;
}

}  // namespace memloupe::recorder
