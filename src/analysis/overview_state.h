// The Overview as OverviewBuilder builds it, and its accounting of an Alloc's
// and a Free's block (the heap, its peak, the mapped memory): in a header of
// its own so that the streaming AggregateBuilder that drives the builder (the
// analysis index's, aggregate.h) inlines it into its own work on the event,
// one call per event for both: an Alloc ~36 instructions fewer and a Free
// ~13 on the suite's (a), the call into the Overview, its frame and its own
// tests of the thread and the mode (docs/RECORDER.md, "The index's per-event
// calls").
// The rest of the builder (the other events, its own table of live blocks for
// add()) is overview.cc's.
#pragma once

#include <cstdint>

#include "analysis/event_time.h"
#include "analysis/overview.h"
#include "analysis/timeline_builder.h"

namespace memloupe::analysis {

struct OverviewState {
  Overview o;
  MonotoneClock clock;
  Count live;
  double peak_bytes = -1;
  uint64_t new_maxima = 0;  // times the live heap has reached a new maximum so far
  TimelineBuilder heap;
  // A Mode::All trace's heap, counted in integers: its Counts' bytes are exact,
  // and their conversions to double (two per Alloc and Free) and the doubles'
  // sums were ~8 instructions of every Alloc and Free. Its peaks are compared
  // in integers too: `exact_peak` is peak_bytes + 1 (0: none yet, as
  // peak_bytes' -1), `exact_combined_peak` is combined_peak_bytes.
  ExactTimelineBuilder exact_heap;
  uint64_t exact_peak = 0;
  uint64_t exact_combined_peak = 0;
  // Mapped memory (model.h, MappedMemory), kept apart from the heap.
  Count mapped_live;
  // mapped_bytes() as of the last change to mapped_live: note_combined() adds
  // it to the heap's bytes per Alloc, and mapped blocks are rare (a u64 to
  // double conversion per Alloc was a tenth of counted_alloc's instructions).
  double mapped_live_bytes = 0;
  double mapped_peak_bytes = -1;
  TimelineBuilder mapped;
  // o.threads.size(), tested per Alloc (the size of a vector of 64-byte
  // ThreadInfos is a subtraction and a shift), as the Aggregate's thread_slots.
  size_t thread_slots = 0;

  double heap_bytes() const { return o.estimator.bytes_value(live); }
  double mapped_bytes() const { return mapped_live_bytes; }
  void mapped_changed() { mapped_live_bytes = o.estimator.bytes_value(mapped_live); }
  // `heap`: heap_bytes(), which the caller has at hand (an Alloc's bytes_value is
  // a u64-to-double conversion).
  void note_combined(uint64_t t, double heap) {
    if (o.estimator.exact()) return note_exact_combined(t);
    const double combined = heap + mapped_bytes();
    if (combined > o.mapped.combined_peak_bytes) {
      o.mapped.combined_peak_bytes = combined;
      o.mapped.combined_peak_ns = t;
    }
  }
  void note_exact_combined(uint64_t t) {
    const uint64_t combined = live.bytes + mapped_live.bytes;
    if (combined > exact_combined_peak) {
      exact_combined_peak = combined;
      o.mapped.combined_peak_bytes = static_cast<double>(combined);
      o.mapped.combined_peak_ns = t;
    }
  }
  // The thread's slot, made with those before it (none past a bound: a
  // damaged or hostile trace must not make us allocate).
  ThreadInfo* thread(format::ThreadId id);

  // The heap accounting of an Alloc / Free whose block's Count is known.
  [[gnu::always_inline]] void counted_alloc(uint64_t t, const format::Alloc& a, const Count& c) {
    alloc_seen(a);
    if (format::func_maps(a.func)) return mapped_alloc(t, c);
    const bool exact = o.estimator.exact();
    add_block(o.allocated, c, exact);
    add_block(live, c, exact);
    if (exact) [[likely]] return exact_heap_grew(t, a.id, c.bytes);
    const double live_bytes = o.estimator.bytes_value(live);
    heap.change(t, live_bytes, o.estimator.bytes_value(c), 0);
    if (live_bytes > peak_bytes) new_peak(t, a.id);
    note_combined(t, live_bytes);
  }
  [[gnu::always_inline]] void counted_free(uint64_t t, const Count* c, format::Func func) {
    ++o.free_events;
    if (c == nullptr) {
      ++o.unmatched_frees;
      return;
    }
    if (format::func_maps(func)) return mapped_free(t, *c);
    if (o.estimator.exact()) [[likely]] {
      remove_block(live, *c, true);
      return exact_heap.change(t, live.bytes, 0, c->bytes);
    }
    remove_block(live, *c, false);
    heap.change(t, o.estimator.bytes_value(live), 0, o.estimator.bytes_value(*c));
  }

  // counted_alloc() of a Mode::All block, whose Count is made of its fields
  // (Estimator::block): added field by field, none made (a 64-byte Count
  // built and passed was ~14 instructions, one per Alloc and one per Free of
  // the streaming pass). The driver has made the thread's slot (new_thread()
  // when a.thread >= thread_slots): it tests for a new thread per Alloc too.
  [[gnu::always_inline]] void exact_alloc(uint64_t t, const format::Alloc& a) {
    ++o.alloc_events;
    if (format::func_maps(a.func)) [[unlikely]] return mapped_exact(t, a.size, a.n_samples, true);
    add_exact_block(o.allocated, a.size, a.n_samples);
    add_exact_block(live, a.size, a.n_samples);
    exact_heap_grew(t, a.id, a.size);
  }
  // A Mode::All heap grew by the block `id` of `bytes`, now `live`.
  void exact_heap_grew(uint64_t t, format::AllocId id, uint64_t bytes) {
    exact_heap.change(t, live.bytes, bytes, 0);
    if (live.bytes >= exact_peak) new_peak(t, id);
    note_exact_combined(t);
  }
  // counted_free() of a known Mode::All block (exact_alloc()'s rule).
  [[gnu::always_inline]] void exact_free(uint64_t t, uint64_t size, uint32_t n_samples, format::Func func) {
    ++o.free_events;
    if (format::func_maps(func)) [[unlikely]] return mapped_exact(t, size, n_samples, false);
    remove_exact_block(live, size, n_samples);
    exact_heap.change(t, live.bytes, 0, size);
  }
  void alloc_seen(const format::Alloc& a) {
    ++o.alloc_events;
    if (a.thread.value >= thread_slots) [[unlikely]] new_thread(a.thread);
  }

  // The rare paths, out of line (overview.cc): inline, their registers and
  // copies made the usual case save six registers per Alloc.
  [[gnu::noinline]] void new_thread(format::ThreadId id);
  [[gnu::noinline]] void new_peak(uint64_t t, format::AllocId id);
  // exact_alloc()'s and exact_free()'s mapping blocks, their Count made out
  // of line (a Count on the stack gave the usual case a frame).
  [[gnu::noinline]] void mapped_exact(uint64_t t, uint64_t size, uint32_t n_samples, bool alloc);
  // A sampled trace's blocks, whose Count is the Estimator's for their fields.
  [[gnu::noinline]] void estimated_alloc(uint64_t t, const format::Alloc& a);
  [[gnu::noinline]] void estimated_free(uint64_t t, format::Func func, uint64_t size, uint32_t n_samples,
                                       uint32_t bytes_per_sample);
  [[gnu::noinline]] void mapped_free(uint64_t t, const Count& c);
  [[gnu::noinline]] void mapped_alloc(uint64_t t, const Count& c);
};

}  // namespace memloupe::analysis
