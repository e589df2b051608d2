// The Query applied to every allocation (see model.h), in either of two ways.
//
// Pass 2 (after an Overview): a block's fate is only known when it ends (its
// lifetime, whether it was live in the window), so each block waits in a
// LiveTable until its Free, or the end of the trace, and is then "settled":
// tested against the filter and counted. The Overview names the allocation at
// which the heap peaked, which decides "live at the peak" per block.
//
// One pass (driving an OverviewBuilder): the filter is decided at allocation,
// so blocks are counted as allocated at once and the rest at their free; the
// peak comes from PeakTrackers (below). The table of live blocks holds every
// block, those the filter drops too (marked kDropped), because the overview's
// heap needs their sizes when they are freed.
//
// Pass 2 as the events stream (driving an OverviewBuilder, as the one pass
// does): pass 2's settle() at each free, with the two things that need the
// finished Overview deferred to finish() (aggregate.h): PeakSince per site and
// thread, and the blocks still live.
//
// The series (Query::series_buckets) are built online in every mode, their
// bucket width doubling as the trace goes on (Impl::widen_series).
#include <algorithm>
#include <bit>
#include <cassert>
#include <system_error>
#include <thread>

#include "analysis/event_time.h"
#include "analysis/frame_names.h"
#include "analysis/live_table.h"
#include "analysis/model.h"
#include "analysis/overview_state.h"
#include "analysis/stack_table.h"
#include "analysis/usable_cpus.h"

namespace memloupe::analysis {
namespace {

constexpr uint32_t kMaxThreads = 1u << 20;
constexpr uint32_t kDropped = ~uint32_t{0};  // Block::stack of a block the filter dropped
constexpr unsigned kMaxSeriesShift = 63;  // the series' widest bucket: 2^63 ns

struct Block {
  uint64_t time = 0;
  uint64_t size = 0;
  uint32_t stack = 0;
  uint32_t thread = 0;
  uint32_t n_samples = 0;
  uint32_t bytes_per_sample = 0;  // format::Alloc's (0: the header's)
};

// Block::stack of a window slot without a block (no stack has this id: the
// table of stacks would need 2^32 - 2 of them first; kDropped is another).
constexpr uint32_t kVacant = kDropped - 1;

// The Aggregate's window slot: the Block alone, its stack marking a vacant
// slot (live_table.h), 32 bytes aligned to 32, one line's half; with the id
// beside it a slot was 40 bytes and half of them spanned two lines, two
// misses for one Alloc's or Free's block.
struct alignas(32) BlockSlot {
  static constexpr bool kKeyless = true;
  Block value{.stack = kVacant};

  bool holds(uint64_t) const { return value.stack != kVacant; }
  bool empty() const { return value.stack == kVacant; }
  void set(uint64_t, const Block& b) { value = b; }
  void clear() { value.stack = kVacant; }
};
static_assert(sizeof(BlockSlot) == 32);

bool live_in(const TimeWindow& w, uint64_t alloc, uint64_t free) {
  return alloc <= w.end_ns && free > w.begin_ns;
}

bool window_accepts(const Filter& f, uint64_t alloc, uint64_t free, bool freed) {
  if (!f.window) return true;
  const TimeWindow& w = *f.window;
  switch (f.test) {
    case WindowTest::Live: return live_in(w, alloc, free);
    case WindowTest::Allocated: return alloc >= w.begin_ns && alloc <= w.end_ns;
    case WindowTest::Freed: return freed && free >= w.begin_ns && free <= w.end_ns;
  }
  return false;
}

constexpr unsigned bit(Metric m) { return 1u << static_cast<unsigned>(m); }

// add_block() to the masked metrics, in metric order.
void add_masked(Metrics& m, unsigned mask, const Count& c, bool exact) {
  for (; mask != 0; mask &= mask - 1) add_block(m.counts[static_cast<size_t>(__builtin_ctz(mask))], c, exact);
}

// The bucket `index` of a stack's series (sorted by `index`: SeriesBucket,
// or TallyCell), added if it is not there.
template <class Bucket>
Bucket& bucket_at(std::vector<Bucket>& series, uint32_t index) {
  // Most blocks die young, in the bucket of the latest event or one of the
  // few before it: the last ones, searched from the end (a binary search of
  // the row was ~70 instructions a block freed in a later bucket than its
  // allocation's, one in nine on the suite's (a) and (b)).
  size_t end = series.size();
  for (size_t tries = 0; end > 0 && tries < 4; --end, ++tries) {
    Bucket& b = series[end - 1];
    if (b.index == index) return b;
    if (b.index < index) break;
  }
  auto it = std::lower_bound(series.begin(), series.begin() + static_cast<std::ptrdiff_t>(end), index,
                             [](const Bucket& b, uint32_t i) { return b.index < i; });
  if (it == series.end() || it->index != index) it = series.insert(it, Bucket{index});
  return *it;
}

void add_bucket(SeriesBucket& into, const SeriesBucket& from) {
  into.allocated += from.allocated;
  into.freed += from.freed;
  into.leaked += from.leaked;
}

// A stack's series in buckets twice as wide (Impl::widen_series): bucket i
// becomes i / 2, its odd neighbour added to the even one (so pass 2 and the
// streaming pass, which widen at the same blocks, sum a sampled trace's
// doubles in the same order).
template <class Bucket>
void merge_pairs(std::vector<Bucket>& series) {
  size_t kept = 0;
  for (size_t i = 0; i < series.size(); ++i) {
    const uint32_t index = series[i].index >> 1;
    if (kept > 0 && series[kept - 1].index == index) {
      add_bucket(series[kept - 1], series[i]);
      continue;
    }
    if (kept != i) series[kept] = series[i];
    series[kept++].index = index;
  }
  series.resize(kept);
}

// Mode::All blocks' Counts summed as integers: pass 2's freed blocks as it
// streams, for a query that keeps every freed block (the index's,
// AggregateBuilder::Impl::tallied), and their series' buckets (TallyCell).
// Each such Count is {1 block, n_samples, size,
// 1.0 object} (Estimator::block), so a sum of them is its block count, samples
// and bytes, with the block count as its objects (a double, exact below 2^53 in
// any order): three integer adds per stack, thread and lifetime bucket per free
// instead of settle()'s Counts per metric, added to the metrics at finish() (the
// same bits: index_aggregate_test; docs/ANALYSIS.md).
struct Tally {
  uint64_t blocks = 0, samples = 0, bytes = 0;

  void add(uint64_t size, uint32_t n_samples) {
    ++blocks;
    samples += n_samples;
    bytes += size;
  }
  Tally& operator+=(const Tally& o) {
    blocks += o.blocks;
    samples += o.samples;
    bytes += o.bytes;
    return *this;
  }
  Count count() const {
    Count c;
    c.blocks = blocks;
    c.samples = samples;
    c.bytes = bytes;
    c.objects = static_cast<double>(blocks);
    return c;
  }
};

// One site's (or thread's) live blocks, and what they were when the heap last
// reached a new maximum. `epoch` is the number of new maxima seen when the
// copy was taken: the copy is taken on the first change after a new maximum,
// and a tracker not changed since the latest one still holds its value then.
struct PeakTracker {
  Count live;
  Count at_peak;
  uint64_t epoch = 0;

  void sync(uint64_t maxima) {
    if (epoch != maxima) {
      at_peak = live;
      epoch = maxima;
    }
  }
  const Count& peak(uint64_t maxima) const { return epoch == maxima ? at_peak : live; }
};

// Pass 2 as it streams: a site's (or thread's) blocks freed since the latest
// new maximum of the heap, by then live at that peak. Pass 2 counts a freed
// block at the peak when it was allocated up to the peak's allocation and
// freed after it; the streaming pass knows only the peak so far, so it sums
// the blocks freed since then (whose ids it compares with that peak's) and
// starts again from zero at the next new maximum (lazily: `epoch` is the
// number of new maxima when the sum was started). The last sum is pass 2's
// "freed after the peak", added in the same order, so its doubles are too.
struct PeakSince {
  Count freed;
  uint64_t epoch = 0;

  void add(uint64_t maxima, const Count& c) {
    since(maxima);
    freed += c;
  }
  // add() of a Mode::All block (add_exact_block(): its objects are left to
  // at()'s reader, objects_of_blocks()). A Count made and added per block
  // was half of the ~28 instructions of a block freed at the peak so far.
  void add_exact(uint64_t maxima, uint64_t size, uint32_t n_samples) {
    since(maxima);
    add_exact_block(freed, size, n_samples);
  }
  Count at(uint64_t maxima) const { return epoch == maxima ? freed : Count{}; }

 private:
  void since(uint64_t maxima) {
    if (epoch != maxima) {
      freed = Count{};
      epoch = maxima;
    }
  }
};

// A stack's or thread's freed blocks (Allocated and Freed), and those of them
// that were temporary.
struct FreedTally {
  Tally freed, temporary;
};

// Pass 2 as it streams, when `tallied`: a bucket of a stack's series, the
// Tallies of its freed blocks allocated in it and freed in it (56 bytes
// where a SeriesBucket's Counts are 200), made the stack's SeriesBuckets at
// finish() (the blocks still live are settled into those: Leaked).
struct TallyCell {
  uint32_t index = 0;
  Tally allocated, freed;
};

void add_bucket(TallyCell& into, const TallyCell& from) {
  into.allocated += from.allocated;
  into.freed += from.freed;
}

// A stack's FreedTally and its series' TallyCells, side by side: a free
// adds to both (AggregateBuilder::Impl::settle_tallied).
struct StackTally : FreedTally {
  std::vector<TallyCell> series;  // sorted by index
  // Where the stack's latest block freed in a later bucket than its
  // allocation's found its allocation's cell (tally_series_apart): the
  // next such block was often allocated in the same bucket. A position,
  // checked before use (cells inserted or merged since move the cells).
  uint32_t allocated_hint = 0;
};

// At finish(), the stacks' cells made SeriesBuckets on two threads from this
// many on (~1 ms of work on one; a thread costs ~0.1 ms).
constexpr size_t kCellsForTwoThreads = 16 * 1024;

}  // namespace

uint64_t series_width(uint64_t last_ns, uint32_t buckets) {
  unsigned shift = 0;
  while (shift < kMaxSeriesShift && (last_ns >> shift) >= buckets) ++shift;
  return uint64_t{1} << shift;
}

uint32_t series_buckets_covering(const Aggregate& a, uint64_t duration_ns) {
  if (a.series_buckets == 0) return 0;
  return static_cast<uint32_t>(std::min<uint64_t>(a.series_buckets, duration_ns / a.series_bucket_ns + 1));
}

struct AggregateBuilder::Impl {
  // Pass 2: the finished Overview; one pass and pass 2 as it streams: the
  // OverviewBuilder this one drives.
  const Overview* overview = nullptr;
  OverviewBuilder* alongside = nullptr;
  // alongside's state: its accounting of an Alloc and a Free is inlined
  // into this builder's (on_alloc, on_free), one call per event for both.
  OverviewState* ov = nullptr;
  bool streaming = false;  // pass 2 as it streams (alongside is set)
  const reader::SymbolTable& symbols;
  Aggregate a;
  // One pass and pass 2 as it streams: the OverviewBuilder's too, which is
  // handed each Alloc's and Free's time clamped here (one clamp per event,
  // not two); copied in and out around its add() of the other events
  // (theirs are clamped there) and at finish().
  MonotoneClock clock;
  StackTable stack_table;
  std::vector<StackStats> stacks;    // by StackTable id
  std::vector<uint8_t> stack_kept;   // by StackTable id: passes --focus
  std::vector<Metrics> threads;
  // One pass only, by StackTable id / thread id.
  std::vector<PeakTracker> stack_peaks, thread_peaks;
  // 64 Ki ids (2 MiB of BlockSlots), not the default 16 Ki: on the suite's (a), whose
  // consumers free the producers' blocks, 300 k of its 4.02 M blocks outlived
  // a 16 Ki window and moved to the hash part, each an insert that missed the
  // cache (~60% of on_alloc's samples) and a take from there; 212 k with 64 Ki
  // (~20%). (b) and sqlite3 move few either way (docs/RECORDER.md, 2026-11-25).
  LiveTable<Block, 65536, BlockSlot> live;
  bool peak_passed = false;
  // Pass 2 as it streams, by StackTable id / thread id; the peak so far.
  std::vector<PeakSince> stack_since, thread_since;
  // Pass 2 as it streams, when `tallied`: by StackTable id / thread id /
  // lifetime bucket, and the immediate frees (Tally).
  bool tallied = false;
  std::vector<StackTally> stack_tally;
  std::vector<FreedTally> thread_tally;
  std::array<Tally, LifetimeHistogram::kBuckets> lifetime_tally{};
  Tally immediate_tally;
  // The series' bucket width is 1 << series_shift ns (widen_series).
  unsigned series_shift = 0;
  uint64_t maxima_seen = 0;
  // The allocation at the peak so far (pass 2 as it streams): a freed block
  // is live at it when its id is at most peak_id and there is one
  // (at_peak_so_far). Two fields, not an optional: the usual Free's test is
  // the id's compare alone (an optional's flag was loaded and tested first).
  uint64_t peak_id = 0;
  bool has_peak = false;
  bool at_peak_so_far(uint64_t id) const { return id <= peak_id && has_peak; }

  Impl(const reader::SymbolTable& s, const Query& q, const format::TraceInfo& info)
      : symbols(s), keeps_every_alloc(keeps_every(q.filter)) {
    a.query = q;
    a.estimator = Estimator(info);
    a.series_buckets = q.series_buckets;
  }

  const std::vector<ModuleInfo>& modules() const {
    return overview ? overview->modules : ov->o.modules;
  }
  bool one_pass() const { return alongside && !streaming; }
  uint64_t duration() const { return overview ? overview->duration_ns : clock.last(); }

  bool stack_passes_focus(std::span<const uint64_t> frames) const {
    const Filter& f = a.query.filter;
    if (f.focus.empty()) return true;
    return std::any_of(frames.begin(), frames.end(), [&](uint64_t address) {
      return address_matches(address, symbols, modules(), f.focus);
    });
  }

  // The series' bucket of a time, the width doubled first while it falls
  // past the last bucket (times never go back, so the buckets cover
  // [0, latest]).
  uint32_t series_index(uint64_t t) {
    if ((t >> series_shift) >= a.series_buckets) [[unlikely]] return widen_series(t);
    return static_cast<uint32_t>(t >> series_shift);
  }
  // The series online, in every mode: its bucket width is a power of two of
  // ns, from 1 ns, doubled (each stack's buckets merged in pairs) when a
  // block's time falls past the last of the query's buckets, as the heap's
  // Timeline does (timeline_builder.h); finish() widens it to cover the
  // duration, so every mode ends at series_width(duration) with the same
  // buckets. Pass 2 and the streaming pass add the same blocks in the same
  // order (at each free, and the blocks still live at the end), so they
  // widen at the same blocks and a sampled trace's doubles are summed alike.
  // ns, not the trace's ticks: a bucket is a shift, not a division, and a
  // time that is not a whole tick (a CTF import) needs no other path.
  // Returns t's bucket; the last for a time past 2^63 ns with one bucket
  // (damage: the width stops at 2^63).
  [[gnu::noinline]] uint32_t widen_series(uint64_t t) {
    // series_width's rule; the widths before were those of earlier times, so
    // the shift only grows, one merge per doubling.
    for (const unsigned shift = static_cast<unsigned>(std::countr_zero(series_width(t, a.series_buckets)));
         series_shift < shift; ++series_shift) {
      for (StackStats& s : stacks) merge_pairs(s.series);
      for (StackTally& s : stack_tally) merge_pairs(s.series);
    }
    return static_cast<uint32_t>(std::min<uint64_t>(t >> series_shift, a.series_buckets - 1));
  }
  // A block's allocation bucket, given its end's `last` (series_index, which
  // may widen: first).
  uint32_t series_first(const Block& b, uint32_t last) const {
    return std::min(static_cast<uint32_t>(b.time >> series_shift), last);
  }

  Metrics* thread_metrics(uint32_t thread) {
    if (thread < thread_slots) [[likely]] return &threads[thread];  // (at most kMaxThreads)
    return new_thread(thread);
  }
  // threads.size(), tested per Free (the size of a vector of 384-byte
  // Metrics is a subtraction, a shift and a multiplication).
  size_t thread_slots = 0;
  // A thread's first block: its slots (none past kMaxThreads: damage). Out
  // of line, as note_alloc's: inline, the resizes made the per-event
  // functions that test for a new thread save more registers.
  [[gnu::noinline]] Metrics* new_thread(uint32_t thread) {
    if (thread >= kMaxThreads) return nullptr;
    threads.resize(thread + 1);
    if (one_pass()) thread_peaks.resize(thread + 1);
    if (streaming) thread_since.resize(thread + 1);
    if (tallied) thread_tally.resize(thread + 1);
    thread_slots = threads.size();
    return &threads[thread];
  }

  // Adds `c` to the masked metrics of the block's stack and thread (the totals
  // are the sum over stacks, made at the end).
  void count(const Block& b, unsigned mask, const Count& c) {
    const bool exact = a.estimator.exact();
    add_masked(stacks[b.stack].metrics, mask, c, exact);
    if (Metrics* t = thread_metrics(b.thread)) add_masked(*t, mask, c, exact);
  }

  // One pass: the block's stack and thread gain (or lose) a live block.
  void track(const Block& b, const Count& c, bool gained) {
    const uint64_t maxima = ov->new_maxima;
    PeakTracker* trackers[] = {&stack_peaks[b.stack],
                               b.thread < thread_peaks.size() ? &thread_peaks[b.thread] : nullptr};
    for (PeakTracker* p : trackers) {
      if (p == nullptr) continue;
      p->sync(maxima);
      if (gained) {
        p->live += c;
      } else {
        p->live -= c;
      }
    }
  }

  // The filter keeps every Alloc (accepts() is always true and every stack
  // passes --focus): the index's query. Fixed for the run, so add_interned
  // tests it once, not the filter's five clauses per Alloc.
  const bool keeps_every_alloc;
  static bool keeps_every(const Filter& f) {
    return f.kind == BlockKind::All && !f.window && !f.thread && f.min_size == 0 && f.max_size == kForever &&
           f.focus.empty();
  }

  // Whether the filter's size, thread and window clauses keep a block at allocation.
  bool accepts(uint64_t t, const format::Alloc& e) const {
    const Filter& f = a.query.filter;
    const bool too_late = f.window && f.test != WindowTest::Freed && t > f.window->end_ns;
    const bool other_kind =
        f.kind != BlockKind::All && format::func_maps(e.func) != (f.kind == BlockKind::Mapped);
    return !((f.thread && *f.thread != e.thread) || e.size < f.min_size || e.size > f.max_size || too_late ||
             other_kind);
  }

  // The stack's id; a new one gets its slots (and is tested against --focus).
  uint32_t intern(std::span<const uint64_t> frames) {
    auto [stack, is_new] = stack_table.intern(frames);
    if (is_new) {
      stacks.emplace_back();
      stack_kept.push_back(stack_passes_focus(frames) ? 1 : 0);
      if (one_pass()) stack_peaks.emplace_back();
      if (streaming) stack_since.emplace_back();
      if (tallied) stack_tally.emplace_back();
    }
    return stack;
  }

  // add_interned() of an Alloc the filter may drop.
  [[gnu::noinline]] void add_filtered(uint64_t t, const format::Alloc& e, uint32_t stack) {
    on_alloc(t, e, accepts(t, e) ? kept(stack) : std::nullopt);
  }

  // add_interned()'s new stack (out of line: inline, it made every Alloc save registers).
  [[gnu::noinline]] void intern_new(std::span<const uint64_t> frames, [[maybe_unused]] uint32_t stack) {
    // The caller numbers stacks as intern() does, so the ids agree.
    [[maybe_unused]] const uint32_t id = intern(frames);
    assert(id == stack);
  }

  // Whether the filter keeps a block at allocation, and its stack's id if so.
  std::optional<uint32_t> select(uint64_t t, const format::Alloc& e) {
    if (!accepts(t, e)) return std::nullopt;
    return kept(intern(e.backtrace));
  }
  std::optional<uint32_t> kept(uint32_t stack) const {
    if (!stack_kept[stack]) return std::nullopt;
    return stack;
  }

  // Per thread, 1 + the id of its latest allocation (0: none yet), for Aggregate::immediate.
  std::vector<uint64_t> last_alloc;
  size_t last_alloc_slots = 0;  // last_alloc.size(), tested per Alloc (as thread_slots)
  // (`b` is in `live`, inserted after note_alloc(): its thread has a slot
  // in last_alloc unless its id is past kMaxThreads, a constant's compare
  // instead of the vector's size per Free.)
  bool freed_before_next_alloc(const format::Free& e, const Block& b) const {
    return e.thread.value == b.thread && b.thread < kMaxThreads && last_alloc[b.thread] == e.id.value + 1;
  }

  // Pass 2 as it streams (the follower's), in Mode::All and `tallied` (the
  // index's query), apart from the other modes (on_alloc_any, on_free_any):
  // one function for every mode saved six registers and built a frame of
  // 200 bytes per event, and tested the mode's flags on the way. The
  // Overview's accounting is inlined (OverviewState): one call per event.
  [[gnu::always_inline]] void on_alloc(uint64_t t, const format::Alloc& e, std::optional<uint32_t> stack) {
    if (!tallied) [[unlikely]] return on_alloc_any(t, e, stack);
    streamed_alloc(t, e, stack, true);
  }
  // `exact`: a Mode::All trace's (the Overview's Count of the block is made
  // of its fields there, not here).
  [[gnu::always_inline]] void streamed_alloc(uint64_t t, const format::Alloc& e, std::optional<uint32_t> stack,
                                             bool exact) {
    note_alloc(e);  // (and the Overview's thread slot)
    if (!stack) ++a.rejected_blocks;
    // (A change of new_maxima means this block made a new maximum. The
    // Overview's first: t then needs no register kept across the insert.)
    if (exact) [[likely]] {
      ov->exact_alloc(t, e);
    } else {
      ov->estimated_alloc(t, e);
    }
    if (ov->new_maxima != maxima_seen) [[unlikely]] {
      maxima_seen = ov->new_maxima;
      peak_id = e.id.value;
      has_peak = true;
    }
    live.insert(e.id.value, Block{t, e.size, stack.value_or(kDropped), e.thread.value, e.n_samples, e.bytes_per_sample});
  }
  void note_alloc(const format::Alloc& e) {
    if (e.thread.value < last_alloc_slots) [[likely]] {
      last_alloc[e.thread.value] = e.id.value + 1;
    } else {
      note_new_thread(e);
    }
  }
  // (Pass 2 as it streams: the Overview's slots for the thread too, which
  // OverviewState::exact_alloc leaves to it. Its slots are never fewer than
  // last_alloc's: both grow here to the same bound.)
  [[gnu::noinline]] void note_new_thread(const format::Alloc& e) {
    if (streaming && e.thread.value >= ov->thread_slots) ov->new_thread(e.thread);
    if (e.thread.value < kMaxThreads) {  // (a larger id is damage: no slot, see thread_metrics)
      last_alloc.resize(e.thread.value + 1);
      last_alloc_slots = last_alloc.size();
      last_alloc[e.thread.value] = e.id.value + 1;
    }
  }
  [[gnu::noinline]] void on_alloc_any(uint64_t t, const format::Alloc& e, std::optional<uint32_t> stack) {
    if (streaming) return streamed_alloc(t, e, stack, a.estimator.exact());
    note_alloc(e);
    if (overview && overview->peak.alloc && *overview->peak.alloc == e.id) peak_passed = true;
    if (!stack) ++a.rejected_blocks;
    if (!alongside) {
      if (stack) live.insert(e.id.value, Block{t, e.size, *stack, e.thread.value, e.n_samples, e.bytes_per_sample});
      return;
    }
    const Block b{t, e.size, stack.value_or(kDropped), e.thread.value, e.n_samples, e.bytes_per_sample};
    live.insert(e.id.value, b);
    const Count c = a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
    if (stack) {
      count(b, bit(Metric::Allocated), c);  // (sizes the thread's tracker too)
      track(b, c, true);
    }
    ov->counted_alloc(t, e, c);  // after track(): a new maximum must follow this block's count
  }

  [[gnu::always_inline]] void on_free(uint64_t t, const format::Free& e) {
    if (!tallied) [[unlikely]] return on_free_any(t, e);
    Block b;
    if (!live.take(e.id.value, b)) return ov->counted_free(t, nullptr, e.func);
    // The Overview's first (neither reads the other's state): the block's
    // series, settle_tallied()'s last step, then ends the Free, and its rare
    // out-of-line case is a tail call with nothing to save around it.
    ov->exact_free(t, b.size, b.n_samples, e.func);  // (the block's Count is made of its fields there)
    if (b.stack != kDropped) settle_tallied(b, t, e.thread.value, at_peak_so_far(e.id.value), freed_before_next_alloc(e, b));
  }
  [[gnu::noinline]] void on_free_any(uint64_t t, const format::Free& e) {
    Block b;
    const bool known = live.take(e.id.value, b);
    if (streaming) {  // (not `tallied`: on_free's otherwise)
      if (!known) return ov->counted_free(t, nullptr, e.func);
      if (b.stack != kDropped) {
        settle(b, t, true, e.thread.value, at_peak_so_far(e.id.value), freed_before_next_alloc(e, b));
      }
      if (a.estimator.exact()) return ov->exact_free(t, b.size, b.n_samples, e.func);
      return ov->estimated_free(t, e.func, b.size, b.n_samples, b.bytes_per_sample);
    }
    if (alongside) {
      if (!known) return ov->counted_free(t, nullptr, e.func);
      const Count c = a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
      if (b.stack != kDropped) {
        track(b, c, false);
        end_of(b, c, t, true, e.thread.value, 0, freed_before_next_alloc(e, b));
      }
      return ov->counted_free(t, &c, e.func);
    }
    if (!known) return;
    const bool at_peak = overview->peak.alloc && e.id.value <= overview->peak.alloc->value && peak_passed;
    settle(b, t, true, e.thread.value, at_peak, freed_before_next_alloc(e, b));
  }

  // Pass 2: the block's whole story is known; count it if the filter keeps it.
  void settle(const Block& b, uint64_t free_t, bool freed, uint32_t free_thread, bool at_peak,
              bool immediate = false) {
    const Filter& f = a.query.filter;
    const uint64_t end = freed ? free_t : std::max(duration(), b.time);
    const uint64_t lifetime = end - b.time;
    const uint64_t free_or_never = freed ? free_t : kForever;
    const bool in_window = f.at_peak ? at_peak : window_accepts(f, b.time, free_or_never, freed);
    if (lifetime < f.min_lifetime_ns || lifetime > f.max_lifetime_ns || !in_window) {
      ++a.rejected_blocks;
      return;
    }
    const Count c = a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
    unsigned mask = bit(Metric::Allocated);
    const bool live_then = f.at_peak ? at_peak : a.query.live_window && live_in(*a.query.live_window, b.time, free_or_never);
    if (live_then) mask |= bit(Metric::Live);
    if (at_peak) {
      if (streaming && freed) {
        peak_since(b, c);
      } else {
        mask |= bit(Metric::Peak);
      }
    }
    // One count() for these metrics and end_of()'s (other metrics: each
    // Count gets the same additions in the same order as with two).
    end_of(b, c, free_t, freed, free_thread, end, immediate, mask);
  }

  // settle() of a freed block, when `tallied`: the filter keeps it, in the
  // metrics Allocated and Freed, and Temporary by end_of()'s rule.
  [[gnu::always_inline]] void settle_tallied(const Block& b, uint64_t free_t, uint32_t free_thread, bool at_peak,
                                             bool immediate) {
    if (at_peak) [[unlikely]] freed_at_peak(b.stack, b.thread, b.size, b.n_samples);
    const uint64_t lifetime = free_t - b.time;
    const bool temp = temporary(b, free_thread, lifetime);
    if (thread_metrics(b.thread)) {
      FreedTally& t = thread_tally[b.thread];
      t.freed.add(b.size, b.n_samples);
      if (temp) t.temporary.add(b.size, b.n_samples);
    }
    lifetime_tally[LifetimeHistogram::bucket_of(lifetime)].add(b.size, b.n_samples);
    if (immediate) immediate_tally.add(b.size, b.n_samples);
    StackTally& s = stack_tally[b.stack];
    if (temp) s.temporary.add(b.size, b.n_samples);
    // Last (the Tallies are apart, so their order is free): tally_series()'s
    // out-of-line case is then a tail call, nothing kept across it.
    if (a.series_buckets > 0) {
      tally_series(s, b, free_t);  // (s.freed: the sum of its cells', add_stack_tallies)
    } else {
      s.freed.add(b.size, b.n_samples);
    }
  }

  // settle_tallied()'s series: the block allocated in its bucket and freed
  // in the latest, at its Free (as pass 2 adds them). Inline for a block
  // freed in the bucket it was allocated in, whose stack has freed in it
  // already: one cell, the stack's last (on the suite's (b) and (a) ~88% of
  // the frees: the buckets are narrow early on). Counting it allocated at
  // its Alloc instead, in the stack's latest cell, cost more at the Alloc
  // than it saved here (docs/RECORDER.md, "The series online").
  void tally_series(StackTally& s, const Block& b, uint64_t free_t) {
    const uint32_t freed = series_index(free_t);  // (first: it may widen)
    const uint32_t allocated = series_first(b, freed);
    std::vector<TallyCell>& series = s.series;
    if (allocated == freed && !series.empty() && series.back().index == freed) [[likely]] {
      TallyCell& cell = series.back();
      cell.allocated.add(b.size, b.n_samples);
      cell.freed.add(b.size, b.n_samples);
      return;
    }
    tally_series_apart(s, b.size, b.n_samples, allocated, freed);
  }
  // The allocation's cell: the hint's, else bucket_at()'s search (its last
  // four cells, then a binary search: ~90 instructions a block on the
  // suite's (a), one free in eight). The free's cell: the stack's last, or
  // a new last: times never go back, so no cell is later than the free's
  // (bucket_at() keeps the rule for any other case).
  // (The block's fields, not the Block: a reference made on_free keep its
  // copy of the Block on the stack, stored and loaded again per Free.)
  // The usual case here, the hint's cell and the stack's last, needs no
  // frame; the searches and the new cell (tally_series_searched) do: apart,
  // ~12 instructions fewer a call ((d) calls this for ~half its Frees).
  [[gnu::noinline]] static void tally_series_apart(StackTally& s, uint64_t size, uint32_t n_samples,
                                                   uint32_t allocated, uint32_t freed) {
    std::vector<TallyCell>& series = s.series;
    if (s.allocated_hint < series.size() && series[s.allocated_hint].index == allocated &&
        series.back().index == freed) [[likely]] {
      series[s.allocated_hint].allocated.add(size, n_samples);
      series.back().freed.add(size, n_samples);
      return;
    }
    tally_series_searched(s, size, n_samples, allocated, freed);
  }
  [[gnu::noinline]] static void tally_series_searched(StackTally& s, uint64_t size, uint32_t n_samples,
                                                      uint32_t allocated, uint32_t freed) {
    std::vector<TallyCell>& series = s.series;
    if (s.allocated_hint < series.size() && series[s.allocated_hint].index == allocated) {
      series[s.allocated_hint].allocated.add(size, n_samples);
    } else {
      TallyCell& cell = bucket_at(series, allocated);
      cell.allocated.add(size, n_samples);
      s.allocated_hint = static_cast<uint32_t>(&cell - series.data());
    }
    if (series.back().index < freed) series.push_back(TallyCell{freed});
    TallyCell& cell = series.back().index == freed ? series.back() : bucket_at(series, freed);
    cell.freed.add(size, n_samples);
  }

  static void add_tally(Metrics& m, const FreedTally& t) {
    add_masked(m, bit(Metric::Allocated) | bit(Metric::Freed), t.freed.count(), true);
    add_block(m[Metric::Temporary], t.temporary.count(), true);
  }

  // Stacks [from, to)'s tallies into their metrics, their cells into their series.
  void add_stack_tallies(size_t from, size_t to) {
    for (size_t i = from; i < to; ++i) {
      StackTally& tally = stack_tally[i];
      std::vector<SeriesBucket>& series = stacks[i].series;
      series.reserve(series.size() + tally.series.size());
      for (const TallyCell& cell : tally.series) {
        SeriesBucket& to_bucket = bucket_at(series, cell.index);
        add_block(to_bucket.allocated, cell.allocated.count(), true);
        add_block(to_bucket.freed, cell.freed.count(), true);
        // With series, each freed block is in one cell's `freed` (merged
        // cells add theirs), so their sum is the stack's (whole numbers: any
        // order), not added a second time per free (settle_tallied).
        tally.freed += cell.freed;
      }
      tally.series = {};
      add_tally(stacks[i].metrics, tally);
    }
  }

  // The tallies into the metrics, and their series into the stacks'
  // (finish_streaming, at the final width: nothing else has added to the
  // stacks' series yet). Each stack's are its own, so when they are many the
  // stacks are split in two by their cells, the second half on a thread of
  // its own: a SeriesBucket is 200 bytes of fresh memory per cell, and (b)'s
  // 64 k cells were ~4-6 ms of page faults and copies on one thread, serial
  // after the program's exit, while the other core waited (docs/RECORDER.md,
  // "After the exit, 2026-11-26 (seventh round)").
  void add_tallies() {
    size_t cells = 0;
    for (const StackTally& t : stack_tally) cells += t.series.size();
    size_t split = stacks.size();
    if (cells >= kCellsForTwoThreads && usable_cpus() > 1) {
      size_t first = 0;
      for (split = 0; split < stacks.size() && 2 * first < cells; ++split) first += stack_tally[split].series.size();
    }
    std::thread second;
    if (split < stacks.size()) {
      try {
        second = std::thread([this, split] { add_stack_tallies(split, stacks.size()); });
      } catch (const std::system_error&) {
        split = stacks.size();  // no thread to be had: all of them here
      }
    }
    add_stack_tallies(0, split);
    if (second.joinable()) second.join();
    for (size_t i = 0; i < threads.size(); ++i) add_tally(threads[i], thread_tally[i]);
    for (size_t i = 0; i < LifetimeHistogram::kBuckets; ++i)
      add_block(a.lifetimes.freed[i], lifetime_tally[i].count(), true);
    add_block(a.immediate, immediate_tally.count(), true);
  }

  // A freed block is temporary when its own thread freed it soon enough.
  bool temporary(const Block& b, uint32_t free_thread, uint64_t lifetime) const {
    return free_thread == b.thread && lifetime <= a.query.temporary_ns;
  }

  // settle_tallied()'s peak_since(), of a Mode::All block (PeakSince::add_exact:
  // when `tallied`, only these add to the PeakSinces, whose objects
  // finish_streaming() sets); out of line (most frees are of blocks
  // allocated after the peak so far; inline, its Count was made on the way).
  [[gnu::noinline]] void freed_at_peak(uint32_t stack, uint32_t thread, uint64_t size, uint32_t n_samples) {
    stack_since[stack].add_exact(maxima_seen, size, n_samples);
    if (thread_metrics(thread)) thread_since[thread].add_exact(maxima_seen, size, n_samples);
  }
  // Pass 2 as it streams: a freed block that is live at the peak so far.
  void peak_since(const Block& b, const Count& c) {
    stack_since[b.stack].add(maxima_seen, c);
    if (thread_metrics(b.thread)) thread_since[b.thread].add(maxima_seen, c);
  }

  // What a block's end adds (both modes): freed or leaked, temporary, its
  // lifetime; `settled`: the metrics settle() counts the block in.
  void end_of(const Block& b, const Count& c, uint64_t free_t, bool freed, uint32_t free_thread, uint64_t end,
              bool immediate = false, unsigned settled = 0) {
    const uint64_t lifetime = (freed ? free_t : end) - b.time;
    const bool exact = a.estimator.exact();
    if (immediate) add_block(a.immediate, c, exact);
    unsigned mask = settled | (freed ? bit(Metric::Freed) : bit(Metric::Leaked));
    if (freed && temporary(b, free_thread, lifetime)) mask |= bit(Metric::Temporary);
    count(b, mask, c);
    if (freed) {
      add_block(a.lifetimes.freed[LifetimeHistogram::bucket_of(lifetime)], c, exact);
    } else {
      add_block(a.lifetimes.never_freed, c, exact);
    }
    if (a.series_buckets > 0) {
      // Allocated in its bucket, then freed or leaked: in every mode at the
      // block's end, in pass 2's order (the one pass too: its series are
      // pass 2's, to the bit).
      const uint32_t last = series_index(freed ? free_t : b.time);  // (first: it may widen)
      const uint32_t first = series_first(b, last);
      std::vector<SeriesBucket>& series = stacks[b.stack].series;
      add_block(bucket_at(series, first).allocated, c, exact);
      add_block(freed ? bucket_at(series, last).freed : bucket_at(series, first).leaked, c, exact);
    }
  }

  // Pass 2 as it streams: what needed the finished Overview, now that the
  // events are over: the peak's freed part, then the blocks still live, as
  // pass 2 ends.
  void finish_streaming() {
    if (tallied) add_tallies();
    // (tallied: the blocks' objects, which freed_at_peak() left)
    auto peak = [&](const PeakSince& p) { return tallied ? objects_of_blocks(p.at(maxima_seen)) : p.at(maxima_seen); };
    for (size_t i = 0; i < stacks.size(); ++i) stacks[i].metrics[Metric::Peak] = peak(stack_since[i]);
    for (size_t i = 0; i < threads.size(); ++i) threads[i][Metric::Peak] = peak(thread_since[i]);
    live.for_each([&](uint64_t id, const Block& b) {
      if (b.stack != kDropped) settle(b, 0, false, b.thread, at_peak_so_far(id));
    });
  }

  void finish_blocks() {
    if (a.series_buckets > 0) {
      series_index(duration());  // the series cover the whole trace (widen_series)
      a.series_bucket_ns = uint64_t{1} << series_shift;
    }
    if (streaming) {
      finish_streaming();
    } else if (alongside) {
      const uint64_t end = clock.last();
      live.for_each([&](uint64_t, const Block& b) {
        if (b.stack != kDropped) {
          end_of(b, a.estimator.block(b.size, b.n_samples, b.bytes_per_sample), 0, false, b.thread, std::max(end, b.time));
        }
      });
      const uint64_t maxima = ov->new_maxima;
      for (size_t i = 0; i < stacks.size(); ++i) stacks[i].metrics[Metric::Peak] = stack_peaks[i].peak(maxima);
      for (size_t i = 0; i < threads.size(); ++i) threads[i][Metric::Peak] = thread_peaks[i].peak(maxima);
    } else {
      const std::optional<format::AllocId> peak = overview->peak.alloc;
      live.for_each([&](uint64_t id, const Block& b) { settle(b, 0, false, b.thread, peak && id <= peak->value); });
    }
    // Without a time selection, "live" is live at the peak.
    if (!a.query.live_window) {
      for (StackStats& s : stacks) s.metrics[Metric::Live] = s.metrics[Metric::Peak];
      for (Metrics& t : threads) t[Metric::Live] = t[Metric::Peak];
    }
    for (const StackStats& s : stacks) a.totals += s.metrics;
  }
};

AggregateBuilder::AggregateBuilder(const Overview& overview, const reader::SymbolTable& symbols,
                                   const Query& query)
    : impl_(std::make_unique<Impl>(symbols, query, overview.info)) {
  impl_->overview = &overview;
}

AggregateBuilder::AggregateBuilder(Streaming, OverviewBuilder& alongside, const format::TraceInfo& info,
                                   const reader::SymbolTable& symbols, const Query& query)
    : impl_(std::make_unique<Impl>(symbols, query, info)) {
  impl_->alongside = &alongside;
  impl_->ov = &alongside.state();
  impl_->streaming = true;
  const Filter& f = query.filter;
  impl_->tallied = impl_->a.estimator.exact() && !f.at_peak && !f.window && f.min_lifetime_ns == 0 &&
                   f.max_lifetime_ns == kForever && !query.live_window;
}

AggregateBuilder::AggregateBuilder(OverviewBuilder& alongside, const format::TraceInfo& info,
                                   const reader::SymbolTable& symbols, const Query& query)
    : impl_(std::make_unique<Impl>(symbols, query, info)) {
  impl_->alongside = &alongside;
  impl_->ov = &alongside.state();
}

AggregateBuilder::~AggregateBuilder() = default;
AggregateBuilder::AggregateBuilder(AggregateBuilder&&) noexcept = default;

void AggregateBuilder::add(const format::Event& event) {
  Impl& s = *impl_;
  if (const auto* alloc = std::get_if<format::Alloc>(&event)) {
    const uint64_t t = s.clock(alloc->time_ns);
    s.on_alloc(t, *alloc, s.select(t, *alloc));
  } else if (const auto* free = std::get_if<format::Free>(&event)) {
    s.on_free(s.clock(free->time_ns), *free);
  } else if (s.alongside) {
    s.ov->clock = s.clock;  // (its time clamped there)
    s.alongside->add(event);
    s.clock = s.ov->clock;
  } else if (auto t = event_time(event)) {
    s.clock(*t);
  }
}

void AggregateBuilder::add(const format::Free& free) {
  Impl& s = *impl_;
  s.on_free(s.clock(free.time_ns), free);
}

void AggregateBuilder::add_interned(const format::Alloc& alloc, uint32_t stack, bool is_new,
                                    std::span<const uint64_t> frames) {
  Impl& s = *impl_;
  if (is_new) [[unlikely]] s.intern_new(frames, stack);
  const uint64_t t = s.clock(alloc.time_ns);
  // (A filter that may drop the block out of line: inline, the optional's
  // tests and a register stayed in the usual case.)
  if (!s.keeps_every_alloc) [[unlikely]] return s.add_filtered(t, alloc, stack);
  s.on_alloc(t, alloc, stack);
}

bool AggregateBuilder::for_each_live(const LiveBlockFn& fn) const {
  const Impl& s = *impl_;
  if (!s.streaming) return false;
  bool whole = true;
  s.live.for_each([&](uint64_t, const Block& b) { whole = whole && b.stack != kDropped; });
  if (!whole) return false;
  s.live.for_each([&](uint64_t id, const Block& b) { fn(id, b.size, b.stack, s.stack_table.frames(b.stack)); });
  return true;
}

Aggregate AggregateBuilder::finish() && {
  Impl& s = *impl_;
  if (s.alongside) s.ov->clock = s.clock;  // (its duration, its inversions)
  s.finish_blocks();
  // Keep the stacks that selected something, with their frames, densely
  // numbered: moved down within the builder's own vector, which then becomes
  // the Aggregate's (a StackStats is ~420 bytes; a new vector grown by
  // push_back moved and page-faulted tens of MB for a program with ~100 k
  // stacks, after its exit: docs/RECORDER.md).
  Aggregate& a = s.a;
  size_t kept = 0, frames_kept = 0;
  for (uint32_t id = 0; id < s.stacks.size(); ++id) {
    if (s.stacks[id].metrics[Metric::Allocated].empty()) continue;
    ++kept;
    frames_kept += s.stack_table.frames(id).size();
  }
  if (kept == s.stacks.size() && kept == s.stack_table.size() && a.frame_pool.empty()) {
    // Every stack kept (the index's query in Mode::All): the table's pool is
    // their frames back to back in this order already, and becomes the
    // Aggregate's without a copy (cc1plus's 67 k stacks: 12 MB of fresh
    // pages faulted and copied into, serially after its exit).
    const uint64_t* pool = kept > 0 ? s.stack_table.frames(0).data() : nullptr;
    for (uint32_t id = 0; id < kept; ++id) {
      const std::span<const uint64_t> frames = s.stack_table.frames(id);
      s.stacks[id].frames_begin = static_cast<uint32_t>(frames.data() - pool);
      s.stacks[id].frames_size = static_cast<uint32_t>(frames.size());
    }
    a.frame_pool = s.stack_table.lend_pool();
  } else {
    kept = 0;
    a.frame_pool.reserve(a.frame_pool.size() + frames_kept);
    for (uint32_t id = 0; id < s.stacks.size(); ++id) {
      StackStats& st = s.stacks[id];
      if (st.metrics[Metric::Allocated].empty()) continue;
      const std::span<const uint64_t> frames = s.stack_table.frames(id);
      st.frames_begin = static_cast<uint32_t>(a.frame_pool.size());
      st.frames_size = static_cast<uint32_t>(frames.size());
      a.frame_pool.insert(a.frame_pool.end(), frames.begin(), frames.end());
      if (kept != id) s.stacks[kept] = std::move(st);
      ++kept;
    }
  }
  s.stacks.resize(kept);
  assert(a.stacks.empty());
  a.stacks = std::move(s.stacks);
  for (uint32_t t = 0; t < s.threads.size(); ++t) {
    if (!s.threads[t][Metric::Allocated].empty()) a.threads.push_back(ThreadStats{format::ThreadId{t}, s.threads[t]});
  }
  return std::move(a);
}

}  // namespace memloupe::analysis
