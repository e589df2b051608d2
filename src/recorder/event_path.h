// One path from a recorded call to the trace. The slow paths (record.cc)
// describe every call they record as one StagedRecord (staging_ring.h) and hand
// it here; what happens next is decided in one place, commit():
//
//   record_alloc ─┐                   ┌─ staged (--all mode, ring mapped, no callback
//   record_free  ─┼─► commit(record) ─┤   wanting ids at once): into the ring; whoever
//   record_realloc┘                   │   holds the trace lock next applies it, in
//                                     │   ticket order (drain_staged)
//                                     └─ direct: the trace lock, then apply() at once
//
// apply() is the same on both sides: the table and the encoder, with the one
// converter from a record to the encoder's AllocRecord.
//
// Invariants:
//  - A free is committed before the real free runs, and a reallocation of a
//    recorded block runs inside its commit: an address is never reused (and
//    recorded by another thread) before the event that ends its previous block.
//  - Staged, a call's ticket stands where the lock would: an allocation takes it
//    after the real call returns, a free before the real free. A realloc of a
//    recorded block holds the realloc lock from before the real call until its
//    record is staged, and an allocation that returned the address the realloc
//    gives up waits for that lock to be free before it takes its ticket: an
//    address the realloc gave up cannot be recorded as another block's before
//    the realloc's event. (Blocks are known by their start address, as in the
//    table; an allocation carved from elsewhere in the old block's range is
//    another address and does not wait.)
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <span>

#include "format/encoder.h"
#include "recorder/callbacks.h"
#include "recorder/real_call.h"
#include "recorder/session.h"
#include "recorder/spin_lock.h"
#include "recorder/staging_ring.h"
#include "recorder/thread_state.h"

namespace memloupe::recorder {

// How long an event written directly waits for a staged record's writer (a
// preempted thread) before it goes ahead without it.
inline constexpr uint64_t kSettleNs = 50'000'000;

// Under the trace lock: encodes the staged records in ticket order, waiting up
// to `settle_ns` for each one ticketed but not yet written. Returns the number
// of records encoded.
size_t drain_staged(uint64_t settle_ns) noexcept;

// Under the trace lock: the encoder, for an event written directly. The staged
// records ticketed before it are encoded first, so that the trace keeps one
// total order.
inline format::Encoder& trace_encoder() noexcept {
  if (g_session.staging.active()) drain_staged(kSettleNs);
  return g_session.raw_encoder();
}

// A call as recorded: `n_samples` the block's samples (1 in --all mode), and
// `stale_mean` the mean its sample was drawn at if the rate changed since (0:
// the current one; record.cc, decide()).
struct Sample {
  uint32_t n_samples = 1;
  uint64_t stale_mean = 0;
};

// A record of the direct path made the encoder's (staging_ring.h): the
// writer's, with its backtrace and samples (the ring's consumer sets the
// backtrace itself, and a ring record has one sample).
[[gnu::always_inline]] inline void for_encoder(StagedRecord& s, std::span<const uint64_t> bt,
                                               Sample sample) noexcept {
  s.backtrace = bt;
  s.n_samples = sample.n_samples;
}

// What a committed call did, for the caller's work outside the lock (the
// program's callbacks), which it gets as an `after(const Applied&)` callable:
// called after an event written directly, and after a staged one only when
// `stored` is false (a failure the consumer has seen since), so that a staged
// call costs no more than staging it.
struct Applied {
  std::optional<uint64_t> ended;        // the table value of the block the call ended
  std::optional<format::AllocId> id;    // the block the call recorded
  bool stored = true;                   // false: the table could not grow
};

// The record of a call by the thread of `slot` at `now` (trace_stamp(): apply()
// converts it); its block's fields are the caller's to fill in.
inline StagedRecord call_record(StagedKind kind, const ThreadSlot& slot, format::Func f,
                                uint64_t now) noexcept {
  StagedRecord rec;
  rec.kind = kind;
  rec.func = f;
  rec.thread = format::ThreadId{slot.thread_id};
  rec.time_ns = now;
  return rec;
}

// --- what the entries below inline ------------------------------------------------

namespace event_detail {

// Set by the consumer when the table could not grow; reported by the next writer.
extern constinit std::atomic<bool> g_table_failed;

// The ring is full: drain it if nobody else does; whether that freed slots
// (event_path.cc).
bool help_drain() noexcept;

// Whether records go through the staging ring. The ids of staged blocks are known
// only once they are drained, so a program callback that wants them at once
// sends the records the direct way.
inline bool staged() noexcept { return g_session.staging.active() && !has_alloc_callback(); }

// The free filter screens frees: its summary bits on the fast path, the block's
// count slot on the slow paths before they take the lock. In --all mode no hook
// takes a fast path (every countdown is parked) and every free is looked up, so
// the filter is not kept there: it would cost random accesses into its 1 MiB
// per call for nothing.
inline bool uses_filter() noexcept { return config().mode != format::Mode::All; }
inline bool may_be_recorded(uintptr_t address) noexcept {
  return !uses_filter() || g_filter.slot_may_contain(address);
}

// Into the ring. `frames`: the calling thread's, for a record with a backtrace:
// the ring then carries only the frames that differ from the thread's last deep
// one. A backtrace that fits in the head slot anyway is not compared (on
// bench_alloc_mt, 5-7 frames, comparing cost 90 instructions per event and
// saved nothing). False when the consumer has failed to store a block since the
// last call.
[[gnu::always_inline]] inline bool stage(const StagedRecord& rec, std::span<const uint64_t> bt,
                                         StagedFrames* frames) noexcept {
  StagedFrames* mine = bt.size() > StagingRing::kHeadFrames ? frames : nullptr;
  if (g_session.staging.put(rec, bt, help_drain, mine) >= StagingRing::kSlots / 4)
    g_session.flush_wake.wake();
  return !(g_table_failed.load(std::memory_order_relaxed) && g_table_failed.exchange(false));
}

// stage(), and the caller's `after` when the consumer has failed since.
template <class After>
[[gnu::always_inline]] inline void stage_then(const StagedRecord& rec, std::span<const uint64_t> bt,
                                              StagedFrames* frames, After after) noexcept {
  if (!stage(rec, bt, frames)) [[unlikely]] after(Applied{.stored = false});
}

}  // namespace event_detail

// Under the trace lock, on the direct path: what record `s` (of kind K; its
// backtrace and samples set) does to the table and the trace (nothing once the
// session is over). Converts the record's time in place.
template <StagedKind K>
Applied apply(format::Encoder& enc, StagedRecord& s, Sample sample) noexcept;

// The one place where --all's staging and the direct way part. `s` is of kind K.
template <StagedKind K, class After>
[[gnu::always_inline]] inline void commit(const StagedRecord& s, std::span<const uint64_t> bt,
                                          StagedFrames* frames, Sample sample, After after) noexcept {
  if (event_detail::staged()) return event_detail::stage_then(s, bt, frames, after);
  // A copy for apply(): the slow paths' record then never has its address
  // taken, and gcc keeps it in registers on the staged path instead of
  // building it on the stack for put(). (apply() by value instead cost sampled
  // mode's every_call pairs ~18 ns: docs/RECORDER.md, "The writers' side in `--all` mode".)
  StagedRecord copy = s;
  for_encoder(copy, bt, sample);
  const Applied a = [&] {
    LockGuard g(g_session.lock);
    return apply<K>(trace_encoder(), copy, sample);
  }();
  after(a);
}

// An allocation's address `p` may be one that a realloc in progress has just
// given up: wait until that realloc's event is in the order (see the
// invariants). Only an allocation that got the holder's old address waits: the
// holder wrote it before its real call gave the address up, which happens
// before the allocator handed it out again, so an allocation of that address
// reads it (or a later holder's, once this one has taken its ticket and let
// go). Waiting for any held lock made allocations on other threads spin and
// yield behind every realloc's real call and ring write (~14% of
// allocate_slow's samples on bench_alloc_mt, docs/RECORDER.md). The one that
// waits sleeps on the lock's futex: the holder may itself sleep, waiting for
// room in the staging ring.
inline void wait_for_reallocs(uintptr_t p) noexcept {
  if (g_session.realloc_lock.held() && g_session.realloc_old.load(std::memory_order_relaxed) == p)
      [[unlikely]]
    g_session.realloc_lock.wait_until_free();
}

// A new block `block` (kind Alloc, address and size filled in), after the real
// call returned it.
template <class After>
[[gnu::always_inline]] inline void record_alloc(ThreadSlot& slot, const StagedRecord& block,
                                                std::span<const uint64_t> bt, Sample sample,
                                                After after) noexcept {
  if (!slot.announced || !sampling()) return;
  if (g_session.staging.active()) wait_for_reallocs(block.address);
  commit<StagedKind::Alloc>(block, bt, &slot.staged, sample, after);
}

// The record of a free of `p` by the thread of `slot` at `now`.
inline StagedRecord free_record(const ThreadSlot& slot, format::Func f, void* p, uint64_t now) noexcept {
  StagedRecord rec = call_record(StagedKind::Free, slot, f, now);
  rec.address = reinterpret_cast<uintptr_t>(p);
  return rec;
}

// The end of the block at `p` (not null), before the real free.
template <class After>
[[gnu::always_inline]] inline void record_free(const ThreadSlot& slot, format::Func f, void* p,
                                               After after) noexcept {
  const auto key = reinterpret_cast<uintptr_t>(p);
  if (!slot.announced || !tracking() || !event_detail::may_be_recorded(key)) return;
  commit<StagedKind::Free>(free_record(slot, f, p, trace_stamp()), {}, nullptr, {}, after);
}

// --all mode's lean branch (record.cc, records_every_call), for record_alloc
// and record_free: with the lean gate open (session.h) the thread is
// announced, the ring is mapped, no callback wants ids at once and new blocks
// are recorded, so a record goes into the ring without their tests and
// commit()'s. (A session paused or ended meanwhile is the consumer's to see:
// apply() tests it again.)
template <class After>
[[gnu::always_inline]] inline void stage_alloc(ThreadSlot& slot, const StagedRecord& block,
                                               std::span<const uint64_t> bt, After after) noexcept {
  wait_for_reallocs(block.address);
  event_detail::stage_then(block, bt, &slot.staged, after);
}
template <class After>
[[gnu::always_inline]] inline void stage_free(const ThreadSlot& slot, format::Func f, void* p,
                                              After after) noexcept {
  event_detail::stage_then(free_record(slot, f, p, ring_stamp()), {}, nullptr, after);
}

// The realloc lock, held by a realloc of the recorded block at `old` from
// before its real call until its record is in the order (see the invariants).
class ReallocHold {
 public:
  explicit ReallocHold(uintptr_t old) noexcept : guard_(g_session.realloc_lock) {
    g_session.realloc_old.store(old, std::memory_order_relaxed);
  }

 private:
  LockGuard guard_;
};

// A realloc whose old block may be recorded, into the ring: record_realloc's
// staged way, and --all mode's lean branch. Runs `real` under the realloc
// lock, and returns its result.
template <class Real, class After>
[[gnu::always_inline]] inline void* stage_realloc(ThreadSlot& slot, StagedRecord& block,
                                                  std::span<const uint64_t> bt, Real real, After after) noexcept {
  ReallocHold hold(block.old_address);
  block.address = reinterpret_cast<uintptr_t>(real());
  event_detail::stage_then(block, bt, &slot.staged, after);
  return reinterpret_cast<void*>(block.address);
}

// A realloc of `block.old_address` (kind Realloc; size, alignment and `sampled`
// filled in): runs `real` where the invariants want it and records its result,
// as the continuation of a recorded old block or else as a new block. Returns
// the real call's result; `out` says what was recorded.
void* record_realloc(ThreadSlot& slot, StagedRecord block, std::span<const uint64_t> bt, Sample sample,
                     RealCall real, Applied& out) noexcept;

}  // namespace memloupe::recorder
