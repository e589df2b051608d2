// The hooks' slow paths: thread registration, the sampling decision, and putting
// sampled allocations, frees and reallocations into the trace.
//
// Invariants:
//  - Unwinding, module sync and reading the clock happen before the trace lock.
//  - A free is recorded before the real free runs, and a reallocation of a
//    recorded block runs under the trace lock: an address is never reused (and
//    recorded by another thread) before the event that ends its previous block.
//  - The recorder's own calls into libc happen with the thread's hooks parked.
//  - In --all mode (staging_ring.h) a call's ticket stands where the lock would:
//    an allocation takes it after the real call returns, a free before the real
//    free. A realloc of a recorded block holds the realloc lock from before the
//    real call until its record is staged, and every allocation waits for that
//    lock to be free before it takes its ticket: an address the realloc gave up
//    cannot be recorded as another block's before the realloc's event.
#include "recorder/record.h"

#include <sys/syscall.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "recorder/callbacks.h"
#include "recorder/real_funcs.h"
#include "recorder/recorder.h"
#include "recorder/lifecycle.h"
#include "recorder/modules.h"
#include "recorder/sys.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder {
namespace {

using format::AllocId;
using format::ThreadId;

// At most this many innermost frames are the recorder's own (dropped).
constexpr size_t kOwnFramesMax = 8;

struct Decision {
  uint32_t n_samples;
  Gap next;
  // The rate changed (memloupe_set_rate) while this thread's pending gap,
  // drawn at the old mean, ran: this block was sampled at that mean (0: at
  // the current one). Its record is bracketed by RateChange events (with_mean).
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

// Under the trace lock: writes the record(s) `write` makes as sampled at
// `stale_mean` when it is not 0: a RateChange to it before them and one back
// to the current mean after, so the analysis weighs this one block by the mean
// its sample was drawn at. (Only the first sample of a thread other than the
// one that changed the rate; that one redraws its gap at once.)
template <class Write>
auto with_mean(format::Encoder& enc, ThreadId thread, uint64_t now, uint64_t stale_mean, Write write) noexcept {
  if (stale_mean == 0) return write();
  enc.rate_change(thread, now, stale_mean);
  auto result = write();
  enc.rate_change(thread, now, sampling_mean());
  return result;
}

// Raw return addresses from the hook's caller outwards, unwound into `buf` from
// the hook's cold entry (r.start): the innermost frames that lie in this library
// (a hook that called the cold entry rather than jumping to it) are left out,
// however the compiler inlined or tail-called them. The result is a view into
// `buf` (no copy).
std::span<const uint64_t> capture_backtrace(const AllocRequest& r, uint64_t* buf) noexcept {
  const size_t depth = backtrace_depth();
  if (depth == 0) return {};
  const size_t n = unwind_from(*r.start, buf, depth + kOwnFramesMax);
  const CodeRange own = own_code_range();
  size_t first = 0;
  while (first < n && first < kOwnFramesMax && own.contains(buf[first])) ++first;
  const size_t kept = n - first < depth ? n - first : depth;
  return {buf + first, kept};
}

format::AllocRecord make_record(const ThreadState& t, const AllocRequest& r, uint32_t n_samples,
                                void* p, uint64_t now, std::span<const uint64_t> bt) noexcept {
  format::AllocRecord rec;
  rec.thread = ThreadId{t.slot->thread_id};
  rec.time_ns = now;
  rec.size = r.size;
  rec.address = config().mode == format::Mode::All ? reinterpret_cast<uintptr_t>(p) : 0;
  rec.alignment = r.alignment;
  rec.n_samples = n_samples;
  rec.func = r.func;
  rec.backtrace = bt;
  return rec;
}

// The free filter screens frees: its summary bits on the fast path, the block's
// count slot on the slow paths before they take the lock. In --all mode no hook
// takes a fast path (every countdown is parked) and every free is looked up, so
// the filter is not kept there: it would cost random accesses into its 1 MiB
// per call for nothing.
bool uses_filter() noexcept { return config().mode != format::Mode::All; }

// Under the trace lock: makes `p` findable by its free.
bool remember(void* p, uint64_t value) noexcept {
  if (!g_session.table.insert(reinterpret_cast<uintptr_t>(p), value)) return false;
  if (uses_filter()) g_filter.add(reinterpret_cast<uintptr_t>(p));
  return true;
}

// Under the trace lock: the table value of the recorded block at `key`, which
// is no longer findable by a free; nothing if no recorded block is there.
// (Inlined, so that the optional stays in registers: see AddressTable::remove.)
[[gnu::always_inline]] inline std::optional<uint64_t> take_recorded(uintptr_t key) noexcept {
  std::optional<uint64_t> value = g_session.table.take(key);
  if (value && uses_filter()) g_filter.remove(key);
  return value;
}

// Under the trace lock, after a realloc of the recorded block `old_value` (at
// `old_address`) returned `p`, described by `rec`: the event it makes, into
// `enc`, for both paths. A failed call leaves the old block alive; a recorded
// new block continues it (a linked realloc event); otherwise the old block ends
// with a free event.
struct ReallocOutcome {
  bool ended = true;                // the old block ended
  std::optional<AllocId> new_id;    // the new block, if recorded
  bool stored = true;               // false: the table could not grow
};
ReallocOutcome end_realloc(format::Encoder& enc, uint64_t old_value, uintptr_t old_address, void* p,
                           const format::AllocRecord& rec, bool sampled, uint64_t stale_mean = 0) noexcept {
  const AllocId old_id{old_value & kIdMask};
  ReallocOutcome out;
  if (p == nullptr && rec.size != 0) {
    out.ended = false;
    out.stored = remember(reinterpret_cast<void*>(old_address), old_value);
  } else if (p != nullptr && sampled && sampling()) {
    out.new_id = with_mean(enc, rec.thread, rec.time_ns, stale_mean, [&] { return enc.realloc(old_id, rec); });
    out.stored = remember(p, table_value(out.new_id->value, rec.func));
  } else {
    enc.free(old_id, rec.thread, rec.time_ns, rec.func);
  }
  return out;
}

// After an allocation event, outside the lock.
void after_alloc_event(bool stored, const SampledBlock& block) noexcept {
  if (!stored) {
    (LogLine() << "out of memory for the table of recorded blocks; recording disabled").emit();
    end_session(format::EndReason::Stopped);
    return;
  }
  if (g_session.output.half_full()) wake_flush_thread();
  if (has_alloc_callback() && notify_alloc(block)) {
    LockGuard g(g_session.lock);
    const auto key = reinterpret_cast<uintptr_t>(block.address);
    if (g_session.table.take(key)) (void)g_session.table.insert(key, table_value(block.id, block.func) | kNotifyFree);
  }
}

// --- --all mode: staged records (staging_ring.h) ---------------------------------
//
// Used whenever the ring is mapped and no program callback wants ids at once
// (those need the AllocId before the hook returns: the direct path gives it).

constinit std::atomic<bool> g_table_failed{false};

bool staged() noexcept { return g_session.staging.active() && !has_alloc_callback(); }

// The ring is full: encode what is there if the lock is free. When that frees
// nothing (the lock is busy, or the oldest ticket's writer has not published:
// it was preempted), give the CPU away rather than spin: the thread we wait for
// may need it (and under valgrind, which runs one thread at a time, always does;
// spinning there multiplied --all's instruction count by 4.7). Pausing a little
// before yielding measured no different in wall time (11 paired runs).
void help_drain() noexcept {
  if (g_session.lock.try_lock()) {
    const size_t drained = drain_staged(0);
    g_session.lock.unlock();
    if (drained != 0) return;
  }
  sys_call(SYS_sched_yield);
}

// `slot`: the calling thread's, for a record with a backtrace: the ring then
// carries only the frames that differ from the thread's last deep one. A
// backtrace that fits in the head slot anyway is not compared (on
// bench_alloc_mt, 5-7 frames, comparing cost 90 instructions per event and
// saved nothing).
[[gnu::always_inline]] inline void stage(const StagedRecord& rec, std::span<const uint64_t> bt = {},
                                         ThreadSlot* slot = nullptr) noexcept {
  StagedFrames* mine = slot != nullptr && bt.size() > StagingRing::kHeadFrames ? &slot->staged : nullptr;
  if (g_session.staging.put(rec, bt, help_drain, mine) >= StagingRing::kSlots / 4) wake_flush_thread();
  if (g_table_failed.load(std::memory_order_relaxed) && g_table_failed.exchange(false))
    after_alloc_event(false, {});
}

StagedRecord staged_record(StagedKind kind, const ThreadState& t, Func f, uint64_t now) noexcept {
  StagedRecord rec;
  rec.kind = kind;
  rec.func = f;
  rec.thread = t.slot->thread_id;
  rec.time_ns = now;
  return rec;
}

// An Alloc or Realloc record: the block `p` that request `r` returned.
StagedRecord staged_block(StagedKind kind, const ThreadState& t, const AllocRequest& r, void* p,
                          uint64_t now) noexcept {
  StagedRecord rec = staged_record(kind, t, r.func, now);
  rec.address = reinterpret_cast<uintptr_t>(p);
  rec.size = r.size;
  rec.alignment = r.alignment;
  return rec;
}

format::AllocRecord from_staged(const StagedRecord& s, std::span<const uint64_t> bt) noexcept {
  format::AllocRecord rec;
  rec.thread = ThreadId{s.thread};
  rec.time_ns = s.time_ns;
  rec.size = s.size;
  rec.address = s.address;
  rec.alignment = s.alignment;
  rec.func = s.func;
  rec.backtrace = bt;
  return rec;
}

// The consumer's side: what the direct path does under the lock, in ticket order.
// Runs on the flush thread too, so it touches no thread-local state.
void apply_staged(const StagedRecord& s, std::span<const uint64_t> bt) noexcept {
  if (!tracking()) return;  // drained after the trace ended: only the slots are freed
  format::Encoder& enc = g_session.raw_encoder();
  const auto store = [](uint64_t address, uint64_t value) {
    if (!remember(reinterpret_cast<void*>(address), value))
      g_table_failed.store(true, std::memory_order_relaxed);
  };
  std::optional<uint64_t> old;
  switch (s.kind) {
    case StagedKind::Alloc:
      if (sampling()) store(s.address, table_value(enc.alloc(from_staged(s, bt)).value, s.func));
      return;
    case StagedKind::Free:
      if ((old = take_recorded(s.address)))
        enc.free(AllocId{*old & kIdMask}, ThreadId{s.thread}, s.time_ns, s.func);
      return;
    case StagedKind::Realloc:
      if ((old = take_recorded(s.old_address))) {
        const auto p = reinterpret_cast<void*>(s.address);
        if (!end_realloc(enc, *old, s.old_address, p, from_staged(s, bt), s.sampled).stored)
          g_table_failed.store(true, std::memory_order_relaxed);
      } else if (s.address != 0 && s.sampled && sampling()) {  // not recorded: a plain allocation
        store(s.address, table_value(enc.alloc(from_staged(s, bt)).value, s.func));
      }
      return;
  }
}

// A record a few tickets ahead of the one being applied: the table slots its
// application will touch. With ~18,000 live blocks (--all, bench_alloc_mt) the
// table is 512 KiB, and the consumer role moves between cores with the trace
// lock, so these lookups missed the cache.
void prefetch_staged(uint64_t address, uint64_t old_address) noexcept {
  g_session.table.prefetch(address);
  if (old_address != 0) g_session.table.prefetch(old_address);
}

// An allocation's address may be one that a realloc in progress has just given
// up: wait until that realloc's event is in the order (see the invariants).
void wait_for_reallocs() noexcept {
  spin_then_yield([] { return !g_session.realloc_lock.held(); });
}

// --- the direct path ---------------------------------------------------------------

void commit_alloc(const ThreadState& t, const AllocRequest& r, uint32_t n, void* p, uint64_t now,
                  std::span<const uint64_t> bt, uint64_t stale_mean) noexcept {
  if (g_session.staging.active()) wait_for_reallocs();
  if (staged()) {
    if (sampling() && t.slot->announced) stage(staged_block(StagedKind::Alloc, t, r, p, now), bt, t.slot);
    return;
  }
  AllocId id;
  bool stored;
  {
    LockGuard g(g_session.lock);
    if (!sampling() || !t.slot->announced) return;
    format::Encoder& enc = g_session.encoder();
    id = with_mean(enc, ThreadId{t.slot->thread_id}, now, stale_mean,
                   [&] { return enc.alloc(make_record(t, r, n, p, now, bt)); });
    stored = remember(p, table_value(id.value, r.func));
  }
  after_alloc_event(stored, {id.value, n, r.func, r.size, p, bt});
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

// Entry of the allocating slow paths. Parks the thread (phase InHook, countdown
// kParked) for the whole slow path and returns the countdown minus `size` as the
// fast path left it; nullopt if the thread must pass through (it is inside the
// recorder already, or exited). Registers a Fresh thread on the way.
//
// The countdown is exchanged, not loaded: a signal handler's malloc between the
// fast path's subtraction and here either sees us parked (and passes through) or
// has finished (we then see the gap it drew and treat this call as unsampled).
std::optional<int64_t> enter(ThreadState& t, uint64_t size) noexcept {
  const int64_t after = __atomic_exchange_n(&t.countdown, kParked, __ATOMIC_RELAXED);
  if (t.phase == Phase::Active) [[likely]] {
    t.phase = Phase::InHook;
    return after;
  }
  if (t.phase != Phase::Fresh) return std::nullopt;
  t.phase = Phase::InHook;
  activate_thread(t);
  const auto first = static_cast<int64_t>(static_cast<uint64_t>(t.countdown) - size);
  t.phase = Phase::InHook;
  t.countdown = kParked;
  return first;
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

}  // namespace

void* allocate_slow(const AllocRequest& r, RealCall call) noexcept {
  ThreadState& t = t_state;
  ErrnoKeeper program_errno;  // from here: registering a thread may touch errno
  const std::optional<int64_t> after = enter(t, r.size);
  if (!after) return program_errno.real([&] { return pass_through(r, call); });
  t.slot->counters.add(r.func, r.size);
  const Decision d = decide(t, *after, r.size);
  void* p;
  if (d.n_samples == 0) {
    p = program_errno.real(call);
  } else {
    const uint64_t now = trace_now_ns();
    sync_modules_if_due(now);
    uint64_t frames[format::Encoder::kMaxFrames + kOwnFramesMax];
    const std::span<const uint64_t> bt = capture_backtrace(r, frames);
    p = program_errno.real(call);
    if (p != nullptr) commit_alloc(t, r, d.n_samples, p, now, bt, d.stale_mean);
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
  if (counted) {  // from the fast path: Active, the filter's summary bit said "maybe"
    t.phase = Phase::InHook;
    t.countdown = kParked;
  } else {  // parked countdown: Fresh, inside the recorder, exited, or --all mode
    const std::optional<int64_t> after = enter(t, 0);
    if (!after) {
      if (real_free && real_funcs_resolved()) program_errno.real_free(p);
      return;
    }
    next = *after < kSlowBelow ? gap_for_next_call(t) : Gap{*after, t.offset};
    t.slot->counters.add_call(f);
  }
  const auto key = reinterpret_cast<uintptr_t>(p);
  std::optional<uint64_t> value;
  if (p != nullptr && tracking() && t.slot->announced && staged()) {
    StagedRecord rec = staged_record(StagedKind::Free, t, f, trace_now_ns());
    rec.address = key;
    stage(rec);
  } else if (p != nullptr && tracking() && t.slot->announced &&
             (!uses_filter() || g_filter.slot_may_contain(key))) {
    const uint64_t now = trace_now_ns();
    LockGuard g(g_session.lock);
    if (tracking()) value = take_recorded(key);
    if (value) g_session.encoder().free(AllocId{*value & kIdMask}, ThreadId{t.slot->thread_id}, now, f);
  }
  if (value && (*value & kNotifyFree)) notify_free(*value & kIdMask, p);
  if (real_free) program_errno.real_free(p);
  leave(t, next);
}

}  // namespace

void release_slow(Func f, void* p, bool counted) noexcept { end_block_slow(f, p, counted, true); }
void forget_slow(Func f, void* p, bool counted) noexcept { end_block_slow(f, p, counted, false); }

void* reallocate_slow(const AllocRequest& r, void* old, RealCall call) noexcept {
  if (bootstrap::owns(old)) return realloc_from_pool(old, r.size);
  ThreadState& t = t_state;
  ErrnoKeeper program_errno;
  const std::optional<int64_t> after = enter(t, r.size);
  if (!after) return program_errno.real(call);  // `old` came from the real allocator: it is known
  t.slot->counters.add(r.func, r.size);
  const Decision d = decide(t, *after, r.size);
  const auto old_key = reinterpret_cast<uintptr_t>(old);
  const bool old_maybe = tracking() && t.slot->announced &&
                         (!uses_filter() || g_filter.slot_may_contain(old_key));
  const uint64_t now = trace_now_ns();
  uint64_t frames[format::Encoder::kMaxFrames + kOwnFramesMax];
  std::span<const uint64_t> bt;
  if (d.n_samples != 0) {
    sync_modules_if_due(now);
    bt = capture_backtrace(r, frames);
  }

  // --all mode: see the invariants at the top.
  std::optional<LockGuard> realloc_guard;
  if (old_maybe && g_session.staging.active()) realloc_guard.emplace(g_session.realloc_lock);
  if (old_maybe && staged()) {
    void* p = program_errno.real(call);
    StagedRecord rec = staged_block(StagedKind::Realloc, t, r, p, now);
    rec.old_address = old_key;
    rec.sampled = d.n_samples != 0;
    stage(rec, bt, t.slot);
    realloc_guard.reset();
    leave(t, d.next);
    return p;
  }

  // A recorded old block: its end and the new block are written together, with
  // the real realloc inside the lock (see the invariants at the top).
  void* p = nullptr;
  std::optional<uint64_t> value;  // table value of the old block, if it was recorded
  ReallocOutcome out;
  if (old_maybe) {
    LockGuard g(g_session.lock);
    if (tracking()) value = take_recorded(old_key);
    if (value) {
      p = program_errno.real(call);
      out = end_realloc(g_session.encoder(), *value, old_key, p, make_record(t, r, d.n_samples, p, now, bt),
                        d.n_samples != 0, d.stale_mean);
    }
  }
  realloc_guard.reset();  // commit_alloc waits for it
  if (!value) {
    p = program_errno.real(call);
    if (p != nullptr && d.n_samples != 0) commit_alloc(t, r, d.n_samples, p, now, bt, d.stale_mean);
  } else {
    if (out.ended && (*value & kNotifyFree)) notify_free(*value & kIdMask, old);
    if (out.new_id || !out.stored)
      after_alloc_event(out.stored, {out.new_id ? out.new_id->value : 0, d.n_samples, r.func, r.size, p, bt});
  }
  leave(t, d.next);
  return p;
}

size_t drain_staged(uint64_t settle_ns) noexcept {
  // Lambdas, not function pointers: the drain loop is instantiated for them and
  // inlines the prefetch.
  const auto apply = [](const StagedRecord& s, std::span<const uint64_t> bt) { apply_staged(s, bt); };
  const auto ahead = [](uint64_t address, uint64_t old) { prefetch_staged(address, old); };
  return g_session.staging.drain(apply, ahead, settle_ns);
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
