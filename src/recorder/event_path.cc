// The event path's under-lock half: applying a record to the table and the
// encoder, on both paths, and the staged records' consumer (event_path.h).
#include "recorder/event_path.h"

#include <sys/syscall.h>

#include "recorder/sys.h"

namespace memloupe::recorder {

using format::AllocId;
using format::ThreadId;

namespace event_detail {
constinit std::atomic<bool> g_table_failed{false};
}  // namespace event_detail

namespace {

// Under the trace lock: writes the record(s) `write` makes as sampled at
// `stale_mean` when it is not 0: a RateChange to it before them and one back
// to the current mean after, so the analysis weighs this one block by the mean
// its sample was drawn at. (Only the first sample of a thread other than the
// one that changed the rate; that one redraws its gap at once.)
template <class Write>
[[gnu::always_inline]] inline auto with_mean(format::Encoder& enc, ThreadId thread, uint64_t now,
                                             uint64_t stale_mean, Write write) noexcept {
  if (stale_mean == 0) return write();
  enc.rate_change(thread, now, stale_mean);
  auto result = write();
  enc.rate_change(thread, now, sampling_mean());
  return result;
}

using event_detail::uses_filter;

// Under the trace lock: makes `p` findable by its free. Inlined: out of line,
// its call, frame and the filter test's reload were ~16 instructions an
// allocation in the staged records' consumer.
[[gnu::always_inline]] inline bool remember(uint64_t p, uint64_t value) noexcept {
  if (!g_session.table.insert(p, value)) return false;
  if (uses_filter()) g_filter.add(p);
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

// Under the trace lock: the new block of `s` (its time in trace ns, its
// backtrace and samples set: it is the encoder's record as it is), if new
// blocks are recorded now. `traced`: in_traced_process(), asked by the caller.
[[gnu::always_inline]] inline Applied record_block(format::Encoder& enc, const StagedRecord& s, Sample sample,
                                                   bool traced) noexcept {
  Applied out;
  if (!sampling_in(traced)) return out;
  out.id = with_mean(enc, s.thread, s.time_ns, sample.stale_mean, [&] { return enc.alloc(s); });
  out.stored = remember(s.address, table_value(out.id->value, s.func));
  return out;
}

// Under the trace lock, after a realloc of the recorded block `old_value` (at
// `s.old_address`) returned `s.address`: the event it makes. A failed call
// leaves the old block alive; a recorded new block continues it (a linked
// realloc event); otherwise the old block ends with a free event. `s` as for
// record_block.
[[gnu::always_inline]] inline Applied end_realloc(format::Encoder& enc, uint64_t old_value,
                                                  const StagedRecord& s, Sample sample, bool traced) noexcept {
  const AllocId old_id{old_value & kIdMask};
  const ThreadId thread = s.thread;
  const uint64_t time = s.time_ns;
  Applied out;
  if (s.address == 0 && s.size != 0) {
    out.stored = remember(s.old_address, old_value);
  } else if (s.address != 0 && s.sampled && sampling_in(traced)) {
    out.ended = old_value;
    out.id = with_mean(enc, thread, time, sample.stale_mean,
                       [&] { return enc.realloc(old_id, s); });
    out.stored = remember(s.address, table_value(out.id->value, s.func));
  } else {
    out.ended = old_value;
    enc.free(old_id, thread, time, s.func);
  }
  return out;
}

// A record a few tickets ahead of the one being applied: the table slots its
// application will touch. With ~18,000 live blocks (--all, bench_alloc_mt) the
// table is 512 KiB, and the consumer role moves between cores with the trace
// lock, so these lookups missed the cache.
void prefetch_staged(uint64_t address, uint64_t old_address) noexcept {
  g_session.table.prefetch(address);
  if (old_address != 0) g_session.table.prefetch(old_address);
}

// apply() of a record of kind `kind`: a constant on the direct path (one small
// function per kind), the record's own in the staged records' consumer, which
// inlines it (and uses only `stored`, so the rest of the result is not built).
// `s`: its backtrace and samples set, its time the stamp, which this
// converts in place; `traced`: in_traced_process(), asked by the caller (once
// per drain); `to_ns`: the converter of the record's stamp (trace_ns_of, or a
// drain's StampConverter).
template <class ToNs>
[[gnu::always_inline]] inline Applied apply_as(StagedKind kind, format::Encoder& enc, StagedRecord& s,
                                               Sample sample, bool traced, const ToNs& to_ns) noexcept {
  // Drained after the trace ended, a record only frees its slots. (An Alloc's
  // test is record_block's: sampling() implies tracking().)
  Applied out;
  if (kind != StagedKind::Alloc && !tracking_in(traced)) return out;
  // The slow path's stamp (trace_stamp): its raw ticks are converted here, by
  // the trace lock's holder, not on the program's thread.
  s.time_ns = to_ns(s.time_ns);
  switch (kind) {
    case StagedKind::Alloc:
      return record_block(enc, s, sample, traced);
    case StagedKind::Free:
      if ((out.ended = take_recorded(s.address)))
        enc.free(AllocId{*out.ended & kIdMask}, s.thread, s.time_ns, s.func);
      return out;
    case StagedKind::Realloc:
      if (const std::optional<uint64_t> old = take_recorded(s.old_address))
        return end_realloc(enc, *old, s, sample, traced);
      if (s.address != 0 && s.sampled) return record_block(enc, s, sample, traced);  // a plain allocation
      return out;
  }
  return out;
}

}  // namespace

template <StagedKind K>
Applied apply(format::Encoder& enc, StagedRecord& s, Sample sample) noexcept {
  return apply_as(K, enc, s, sample, in_traced_process(), trace_ns_of);
}
template Applied apply<StagedKind::Alloc>(format::Encoder&, StagedRecord&, Sample) noexcept;
template Applied apply<StagedKind::Free>(format::Encoder&, StagedRecord&, Sample) noexcept;
template Applied apply<StagedKind::Realloc>(format::Encoder&, StagedRecord&, Sample) noexcept;

namespace event_detail {

// The ring is full: drain it if the lock is free. When that frees nothing (the
// lock is busy, or the oldest ticket's writer has not published: it was
// preempted), the ring puts the writer to sleep until its consumer has freed
// half the ring (staging_ring.h, wait_for_room): yielding in a loop instead
// burnt the CPU the thread we wait for needs (and under valgrind, which runs
// one thread at a time, spinning multiplied --all's instruction count by 4.7).
bool help_drain() noexcept {
  if (!g_session.lock.try_lock()) return false;
  const size_t drained = drain_staged(0);
  g_session.lock.unlock();
  return drained != 0;
}

}  // namespace event_detail

void* record_realloc(ThreadSlot& slot, StagedRecord block, std::span<const uint64_t> bt, Sample sample,
                     RealCall real, Applied& out) noexcept {
  const bool old_maybe =
      tracking() && slot.announced && event_detail::may_be_recorded(block.old_address);
  const auto keep = [&out](const Applied& a) { out = a; };
  if (old_maybe && event_detail::staged()) return stage_realloc(slot, block, bt, real, keep);
  std::optional<ReallocHold> realloc_hold;
  if (old_maybe && g_session.staging.active()) realloc_hold.emplace(block.old_address);
  // Direct: a recorded old block's end and the new block are written together,
  // with the real realloc inside the lock.
  bool recorded = false;
  if (old_maybe) {
    LockGuard g(g_session.lock);
    format::Encoder& enc = trace_encoder();
    if (const std::optional<uint64_t> old = tracking() ? take_recorded(block.old_address) : std::nullopt) {
      recorded = true;
      block.address = reinterpret_cast<uintptr_t>(real());
      block.time_ns = trace_ns_of(block.time_ns);
      for_encoder(block, bt, sample);
      out = end_realloc(enc, *old, block, sample, in_traced_process());
    }
  }
  realloc_hold.reset();  // record_alloc waits for it
  if (recorded) return reinterpret_cast<void*>(block.address);
  void* const p = real();
  if (p != nullptr && block.sampled) {
    block.kind = StagedKind::Alloc;
    block.address = reinterpret_cast<uintptr_t>(p);
    block.old_address = 0;
    record_alloc(slot, block, bt, sample, keep);
  }
  return p;
}

size_t drain_staged(uint64_t settle_ns) noexcept {
  // Lambdas, not function pointers: the drain loop is instantiated for them and
  // inlines the prefetch. Runs on the flush thread too, so nothing it calls
  // touches thread-local state. Whether this is the traced process is asked
  // once: nothing a drain does changes it. Nor is the clock's line read per
  // record (StampConverter).
  const bool traced = in_traced_process();
  const StampConverter to_ns;
  // The drain's record is the encoder's as it is: its backtrace set by the
  // ring, one sample (the default).
  const auto consume = [traced, &to_ns](StagedRecord& s, std::span<const uint64_t>) {
    if (!apply_as(s.kind, g_session.raw_encoder(), s, {}, traced, to_ns).stored)
      event_detail::g_table_failed.store(true, std::memory_order_relaxed);
  };
  const auto ahead = [](uint64_t address, uint64_t old) { prefetch_staged(address, old); };
  return g_session.staging.drain(consume, ahead, settle_ns);
}

}  // namespace memloupe::recorder
