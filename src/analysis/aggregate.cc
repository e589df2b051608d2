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
// does): pass 2's settle() at each free, with the three things that need the
// finished Overview deferred to finish() (aggregate.h): PeakSince per site and
// thread, the SeriesLog, and the blocks still live.
#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <exception>
#include <thread>

#include "analysis/event_time.h"
#include "analysis/frame_names.h"
#include "analysis/live_table.h"
#include "analysis/model.h"
#include "analysis/stack_table.h"
#include "analysis/usable_cpus.h"
#include "analysis/zeroed_pages.h"
#include "format/varint.h"

namespace memloupe::analysis {
namespace {

constexpr uint32_t kMaxThreads = 1u << 20;
constexpr uint32_t kDropped = ~uint32_t{0};  // Block::stack of a block the filter dropped

struct Block {
  uint64_t time = 0;
  uint64_t size = 0;
  uint32_t stack = 0;
  uint32_t thread = 0;
  uint32_t n_samples = 0;
  uint32_t bytes_per_sample = 0;  // format::Alloc's (0: the header's)
};

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

// The bucket `index` of a stack's sparse series (sorted by `index`: a
// SeriesBucket, or SparseSeries' cells), added if it is not there.
template <class Bucket>
Bucket& bucket_at(std::vector<Bucket>& series, uint32_t index) {
  // Most blocks die young, in the bucket of the latest event: the last one.
  if (!series.empty() && series.back().index == index) return series.back();
  auto it = std::lower_bound(series.begin(), series.end(), index,
                             [](const Bucket& b, uint32_t i) { return b.index < i; });
  if (it == series.end() || it->index != index) it = series.insert(it, Bucket{index});
  return *it;
}

void add_series(std::vector<SeriesBucket>& series, uint32_t index, Count SeriesBucket::*field, const Count& c,
                bool exact) {
  add_block(bucket_at(series, index).*field, c, exact);
}

// The series' bucket of a time (Impl::series_index: min(buckets - 1, t /
// width)), remembering the last bucket's bounds: a time inside them needs no
// division.
class BucketCache {
 public:
  BucketCache(uint64_t width, uint32_t buckets) : width_(width), last_(buckets - 1) {}
  uint32_t operator()(uint64_t t) {
    if (t - low_ < span_) return index_;  // (t < low_ wraps round to a miss)
    index_ = static_cast<uint32_t>(std::min<uint64_t>(last_, t / width_));
    low_ = index_ * width_;
    span_ = index_ == last_ ? ~uint64_t{0} - low_ : width_;  // (a time below low_ still misses)
    return index_;
  }

 private:
  uint64_t width_;
  uint32_t last_;
  uint32_t index_ = 0;
  uint64_t low_ = 0;
  uint64_t span_ = 0;  // nothing cached yet
};

// Mode::All blocks' Counts summed as integers: pass 2's freed blocks as it
// streams, for a query that keeps every freed block (the index's,
// AggregateBuilder::Impl::tallied), and the series replay's buckets
// (DenseSeries). Each such Count is {1 block, n_samples, size,
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

// The series replay's tables, one per part (AggregateBuilder::Impl::
// replay_tallies), each made on its part's thread.
template <class Table>
using Parts = std::vector<std::unique_ptr<Table>>;

// Mode::All's series replayed into a table (AggregateBuilder::Impl::
// replay_series): per stack a row of buckets, each the Tally of the blocks
// allocated and of those freed in it: whole numbers, so the sums are pass 2's
// in any order.
class DenseSeries {
 public:
  static constexpr bool kDealt = true;  // the log's blocks dealt to the parts as they ask (replay_tallies)
  // Whether a table for `stacks` x `buckets` is small enough to be worth it
  // (the suite's (b): 726 stacks, 3.5 MB; cc1plus's 67 k stacks are not).
  static bool fits(size_t stacks, uint32_t buckets) {
    return stacks * buckets * sizeof(Cells) <= (size_t{16} << 20);
  }
  // A row of cells per bucket, not per stack: the log's entries come in free
  // order, so the frees of a stretch of it fall in one bucket's row (726
  // stacks of (b): 35 KB) and most allocations in a few recent rows; a row
  // per stack spread them over the whole table (3.5 MB for (b)), a cache miss
  // on most allocations' cell (2026-11-26, docs/RECORDER.md).
  DenseSeries(size_t stacks, uint32_t buckets) : stacks_(stacks), buckets_(buckets), cells_(stacks * buckets) {}
  // A block allocated (`freed` false) or freed in `bucket`.
  void add(uint32_t stack, uint32_t bucket, bool freed, const Tally& blocks) {
    Cells& cells = cells_[size_t{bucket} * stacks_ + stack];
    (freed ? cells.freed : cells.allocated) += blocks;
  }
  // Adds each bucket that has blocks in any of `tables` (the replay's parts)
  // to its stack's series, for stacks [first, last): the parts' cells summed
  // first (whole numbers: the same Counts as adding them one part at a time),
  // so each series is reserved once, and each range of stacks can go to a
  // thread of its own (AggregateBuilder::Impl::replay_tallies).
  static void add_to(const Parts<DenseSeries>& tables, std::vector<StackStats>& stacks, size_t first,
                     size_t last) {
    if (tables.empty()) return;
    const uint32_t buckets = tables.front()->buckets_;
    std::vector<Cells> sum(buckets);
    for (size_t s = first; s < last; ++s) {
      size_t n = 0;
      for (uint32_t b = 0; b < buckets; ++b) {
        Cells& into = sum[b];
        into = tables.front()->cell(b, s);
        for (size_t t = 1; t < tables.size(); ++t) into += tables[t]->cell(b, s);
        n += into.used() ? 1 : 0;
      }
      if (n == 0) continue;
      std::vector<SeriesBucket>& series = stacks[s].series;
      series.reserve(series.size() + n);
      for (uint32_t b = 0; b < buckets; ++b) {
        const Cells& cells = sum[b];
        if (!cells.used()) continue;
        SeriesBucket& to = bucket_at(series, b);
        add_block(to.allocated, cells.allocated.count(), true);
        add_block(to.freed, cells.freed.count(), true);
      }
    }
  }

 private:
  struct Cells {
    Tally allocated, freed;

    bool used() const { return allocated.blocks != 0 || freed.blocks != 0; }
    Cells& operator+=(const Cells& o) {
      allocated += o.allocated;
      freed += o.freed;
      return *this;
    }
  };
  const Cells& cell(uint32_t bucket, size_t stack) const { return cells_[size_t{bucket} * stacks_ + stack]; }

  size_t stacks_;
  uint32_t buckets_;
  ZeroedPages<Cells> cells_;  // by bucket, then stack
};

// Mode::All's series replayed into rows of cells for more stacks than a
// DenseSeries takes (cc1plus: 67 k stacks, most with a few buckets): per
// stack its buckets' Tallies, sorted by bucket (56 bytes a cell where a
// SeriesBucket is 200), the rows' headers together where the stacks' series
// are ~420 bytes apart (StackStats), added to the stacks' series at the end
// (docs/RECORDER.md, "The series replay after the exit").
class SparseSeries {
 public:
  static constexpr bool kDealt = false;  // a contiguous share of the log's blocks per part (replay_tallies)
  explicit SparseSeries(size_t stacks) : rows_(stacks) {}
  // A block allocated (`freed` false) or freed in `bucket`.
  void add(uint32_t stack, uint32_t bucket, bool freed, const Tally& blocks) {
    Cells& cells = bucket_at(rows_[stack], bucket);
    (freed ? cells.freed : cells.allocated) += blocks;
  }
  // Adds each bucket that has blocks in any of `tables` (the replay's parts)
  // to its stack's series, for stacks [first, last), each series reserved
  // once for all parts (DenseSeries::add_to).
  static void add_to(const Parts<SparseSeries>& tables, std::vector<StackStats>& stacks, size_t first,
                     size_t last) {
    for (size_t s = first; s < last; ++s) {
      size_t n = 0;
      for (const auto& t : tables) n += t->rows_[s].size();
      if (n == 0) continue;
      std::vector<SeriesBucket>& series = stacks[s].series;
      series.reserve(series.size() + n);
      for (const auto& t : tables) {
        for (const Cells& cells : t->rows_[s]) {
          SeriesBucket& to = bucket_at(series, cells.index);
          add_block(to.allocated, cells.allocated.count(), true);
          add_block(to.freed, cells.freed.count(), true);
        }
      }
    }
  }

 private:
  struct Cells {
    uint32_t index = 0;  // the bucket's
    Tally allocated, freed;
  };
  std::vector<std::vector<Cells>> rows_;  // by stack, each sorted by bucket (bucket_at)
};

// `into` += a bucket of another part's series (`from`'s Counts added as a whole).
void add_bucket(std::vector<SeriesBucket>& into, const SeriesBucket& from) {
  SeriesBucket& to = bucket_at(into, from.index);
  to.allocated += from.allocated;
  to.freed += from.freed;
  to.leaked += from.leaked;
}

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
    if (epoch != maxima) {
      freed = Count{};
      epoch = maxima;
    }
    freed += c;
  }
  Count at(uint64_t maxima) const { return epoch == maxima ? freed : Count{}; }
};

// A stack's or thread's freed blocks (Allocated and Freed), and those of them
// that were temporary.
struct FreedTally {
  Tally freed, temporary;
};

// Exact division by the trace's tick (ns), and the test that a time is a
// whole number of ticks, in a multiplication and a rotation (Granlund and
// Montgomery): ns = odd << shift; a multiple of ns times the odd part's
// inverse (mod 2^64), rotated right by shift, is its quotient, at most
// `most`; any other value comes out above `most`.
struct Ticks {
  uint64_t ns = 1;
  uint64_t inverse = 1;
  unsigned shift = 0;
  uint64_t most = ~uint64_t{0};

  explicit Ticks(uint64_t tick_ns = 1) : ns(std::max<uint64_t>(tick_ns, 1)) {
    shift = static_cast<unsigned>(std::countr_zero(ns));
    const uint64_t odd = ns >> shift;
    inverse = odd;  // right in 3 bits (odd * odd = 1 mod 8); each step doubles them
    for (int i = 0; i < 5; ++i) inverse *= 2 - odd * inverse;
    most = ~uint64_t{0} / ns;
  }
  // v / ns if v is a whole number of ticks, else a value above `most`.
  uint64_t of(uint64_t v) const { return std::rotr(v * inverse, static_cast<int>(shift)); }
};

// Pass 2 as it streams: the series of the freed blocks, which need the
// duration for their bucket width, kept until finish() as a few bytes per
// block in the order pass 2 settles them (so each bucket's doubles are summed
// in pass 2's order): stack, free time (from the previous), lifetime, size,
// n_samples, bytes_per_sample; varints, in blocks appended to without moving.
// A Mode::All log (exact(): its Counts ignore bytes_per_sample, estimate.cc,
// and n_samples is 1 but for damage) stores neither, and one entry stands for
// every block of a stack allocated and freed at the same two times (below):
// the stack's varint carries three bits that say a free step other than 0
// (on the suite's (b) one entry in 200: ~130 blocks are freed a tick), a
// block count other than 1, and a samples sum other than the block count,
// follow. The times are written in the trace's ticks (set_tick; a decoded
// trace's are whole ticks, 32 µs on the suite's runs: a lifetime of a few
// ticks is 1 byte, 3 in ns); a time that is not (a CTF import, a hand-made
// trace) starts a log block in ns, which the rest of the log keeps. The
// replay after the program's exit decodes what is left of it
// (docs/RECORDER.md, "What is left after the exit, third round", "fourth
// round", and "The series log in ticks").
class SeriesLog {
 public:
  void set_exact(bool exact) { exact_ = exact; }
  // Before the first entry: the trace's tick (format::TraceInfo::time_unit_ns).
  void set_tick(uint64_t tick_ns) { tick_ = Ticks(tick_ns); }
  struct Entry {
    uint32_t stack = 0;
    uint64_t alloc_ns = 0, free_ns = 0;
    uint64_t size = 0;  // the blocks' bytes
    uint64_t n_samples = 0;
    uint32_t bytes_per_sample = 0;
    uint64_t blocks = 1;  // (Mode::All's entries: how many blocks; n_samples their sum)
    // A Mode::All entry's blocks: the sum of their Counts is its count().
    Tally tally() const { return {blocks, n_samples, size}; }
  };
  // A freed block's entry. Inline for a Mode::All block that joins a sum
  // pending for its free time (on the suite's (a) nine in ten), the rest out
  // of line (append_block): the Entry built per block by the caller and the
  // call were a third of the log's instructions.
  void append(const Block& b, uint64_t free_ns) {
    if (exact_ && bypass_ == 0 && free_ns == pending_free_ns_) {
      Entry& at = pending_[slot_of(b.stack, b.time)];
      if (joins(at, b.stack, b.time)) {
        ++window_blocks_;
        return add_to(at, b.size, b.n_samples, 1);
      }
    }
    append_block(b, free_ns);
  }
  // A Mode::All block in a pause of the sums (below; most of (b)'s freed
  // blocks) is written from its fields (write_block), without the Entry and
  // the pending sums' tests, in calls that save no registers: ~95
  // instructions a block, ~105 through append_entry. (The pause's test inline
  // in append(), or write_block taking the Block by reference, cost (a),
  // whose sums seldom pause, ~15 instructions a Free in on_free's registers.)
  [[gnu::noinline]] void append_block(const Block& b, uint64_t free_ns) {
    if (exact_ && bypass_ > 0) {
      --bypass_;
      return write_block(b.stack, b.time, free_ns, b.size, b.n_samples);
    }
    append_other(b, free_ns);
  }
  [[gnu::noinline]] void append_other(const Block& b, uint64_t free_ns) {
    append_entry({b.stack, b.time, free_ns, b.size, b.n_samples, b.bytes_per_sample});
  }
  [[gnu::always_inline]] void append_entry(const Entry& e) {
    if (!exact_) return write(e);
    if (bypass_ == 0 && e.free_ns != pending_free_ns_) flush_pending(e.free_ns);
    // (Nothing is pending in a pause, which begins in flush_pending(): the
    // log's free times stay in order.)
    if (bypass_ > 0) {
      --bypass_;
      return write(e);
    }
    // Mode::All: times are whole ticks of the trace's time unit (32 µs on
    // the suite's runs, which free ~130 blocks a tick, mostly of a few stacks
    // allocated in the same tick), and its Counts are sums of integers, the
    // same in any grouping: the blocks freed at one time are summed per
    // (stack, allocation time) and written once the time moves on.
    ++window_blocks_;
    const uint16_t slot = slot_of(e.stack, e.alloc_ns);
    Entry& at = pending_[slot];
    if (joins(at, e.stack, e.alloc_ns)) return add_to(at, e.size, e.n_samples, e.blocks);
    if (at.blocks != 0) {
      write(at);
      ++window_entries_;
    } else {
      used_slots_.push_back(slot);
    }
    at = e;
  }
  // The log is read in blocks (in parts, on several threads: replay_series):
  // append() is over.
  size_t blocks() {
    flush_pending(pending_free_ns_);
    if (!blocks_.empty()) blocks_.back().resize(used_);
    return blocks_.size();
  }
  // Calls fn(entry) for each entry of blocks [first, last), in order.
  template <class Fn>
  void read(size_t first, size_t last, Fn&& fn) const {
    for (size_t i = first; i < last; ++i) {
      uint64_t free_ns = starts_[i];
      const uint64_t tick_ns = tick_ns_[i];
      const uint8_t* p = blocks_[i].data();
      const uint8_t* const end = p + blocks_[i].size();
      while (p < end) {
        Entry e;
        const uint64_t stack = get(p);
        e.stack = static_cast<uint32_t>(exact_ ? stack >> 3 : stack);
        if (!exact_ || stack & 4) free_ns += get(p) * tick_ns;
        e.free_ns = free_ns;
        e.alloc_ns = free_ns - get(p) * tick_ns;
        e.size = get(p);
        if (!exact_) {
          e.n_samples = get(p);
          e.bytes_per_sample = static_cast<uint32_t>(get(p));
        } else {
          e.blocks = stack & 2 ? get(p) : 1;
          e.n_samples = stack & 1 ? get(p) : e.blocks;
        }
        fn(e);
      }
    }
  }
  void clear() {
    blocks_ = {};
    starts_ = {};
    tick_ns_ = {};
    free_ns_ = 0;
    used_ = 0;
  }

 private:
  static constexpr size_t kBlock = size_t{1} << 20;
  static constexpr unsigned kSlotBits = 9;
  static constexpr uint64_t kWindow = 4096, kBypass = 65536;

  // One slot per key, no probing: a slot held by another key writes that
  // one's sum out early (any grouping gives the same sums).
  static uint16_t slot_of(uint32_t stack, uint64_t alloc_ns) {
    const uint64_t key = (alloc_ns ^ uint64_t{stack} << 40) * 0x9E3779B97F4A7C15ull;
    return static_cast<uint16_t>(key >> (64 - kSlotBits));
  }
  static bool joins(const Entry& at, uint32_t stack, uint64_t alloc_ns) {
    return at.blocks != 0 && at.stack == stack && at.alloc_ns == alloc_ns;
  }
  static void add_to(Entry& at, uint64_t size, uint64_t n_samples, uint64_t blocks) {
    at.size += size;
    at.n_samples += n_samples;
    at.blocks += blocks;
  }

  // Writes the pending sums out, in the order their slots were taken; the
  // next ones are for `free_ns`.
  // A window of blocks whose entries were more than half their number (the
  // suite's (b): deep stacks freed together, allocated at other times, 1.4
  // blocks an entry) stops the summing for the next kBypass blocks: the slot's
  // check then costs more than the replay saves.
  void flush_pending(uint64_t free_ns) {
    window_entries_ += used_slots_.size();
    for (uint16_t slot : used_slots_) {
      write(pending_[slot]);
      pending_[slot].blocks = 0;
    }
    used_slots_.clear();
    pending_free_ns_ = free_ns;
    if (window_blocks_ < kWindow) return;
    if (window_entries_ * 2 > window_blocks_) bypass_ = kBypass;
    window_blocks_ = window_entries_ = 0;
  }
  [[gnu::always_inline]] void write(const Entry& e) {
    if (!room()) [[unlikely]] next_block();
    if (!put(exact_, e.stack, e.alloc_ns, e.free_ns, e.size, e.n_samples, e.bytes_per_sample, e.blocks)) [[unlikely]]
      write_in_ns(e);
  }
  [[gnu::noinline]] void write_in_ns(const Entry& e) {
    leave_ticks();
    write(e);
  }
  // A Mode::All block's entry of its own: an Entry of one block. (A new
  // block of the log is a tail call: a call here made every entry save and
  // restore six registers.)
  [[gnu::noinline]] void write_block(uint32_t stack, uint64_t alloc_ns, uint64_t free_ns, uint64_t size,
                                     uint32_t n_samples) {
    if (!room()) [[unlikely]] return write_block_in_next(stack, alloc_ns, free_ns, size, n_samples);
    if (!put(true, stack, alloc_ns, free_ns, size, n_samples, 0, 1)) [[unlikely]]
      return write_block_in_ns(stack, alloc_ns, free_ns, size, n_samples);
  }
  [[gnu::noinline]] void write_block_in_next(uint32_t stack, uint64_t alloc_ns, uint64_t free_ns, uint64_t size,
                                             uint32_t n_samples) {
    next_block();
    write_block(stack, alloc_ns, free_ns, size, n_samples);
  }
  [[gnu::noinline]] void write_block_in_ns(uint32_t stack, uint64_t alloc_ns, uint64_t free_ns, uint64_t size,
                                           uint32_t n_samples) {
    leave_ticks();
    write_block(stack, alloc_ns, free_ns, size, n_samples);
  }
  // A time that is not a whole number of ticks: the log goes on in ns, from
  // a block of its own (the unit is the block's).
  void leave_ticks() {
    tick_ = Ticks(1);
    next_block();
  }
  // Whether the last block has room for an entry. It is kBlock bytes, of
  // which used_ are written (it is cut to used_ when the next one starts, and
  // by blocks()).
  bool room() const {
    constexpr size_t kMaxEntry = 6 * format::kMaxVarint;
    return !blocks_.empty() && kBlock - used_ >= kMaxEntry;
  }
  // An entry's varints, where room() (`exact`: exact_, which write_block
  // knows); false, with nothing written, for times that are not whole ticks.
  [[gnu::always_inline]] bool put(bool exact, uint32_t stack, uint64_t alloc_ns, uint64_t free_ns, uint64_t size,
                                  uint64_t n_samples, uint32_t bytes_per_sample, uint64_t blocks) {
    // (The free time seldom moves: its step is tested, and divided, when it does.)
    const uint64_t lifetime = tick_.of(free_ns - alloc_ns);
    if (lifetime > tick_.most) [[unlikely]] return false;
    uint64_t step = 0;
    if (free_ns != free_ns_) [[unlikely]] {
      step = tick_.of(free_ns - free_ns_);  // the clock is monotone
      if (step > tick_.most) return false;
    }
    uint8_t* const start = blocks_.back().data() + used_;
    const bool other_samples = exact && n_samples != blocks;
    const bool other_blocks = exact && blocks != 1;
    const bool stepped = exact && step != 0;
    uint8_t* p = format::put_varint(start, exact ? uint64_t{stack} << 3 | (stepped ? 4 : 0) | (other_blocks ? 2 : 0) |
                                                       (other_samples ? 1 : 0)
                                                 : stack);
    if (!exact || stepped) p = format::put_varint(p, step);
    p = format::put_varint(p, lifetime);
    p = format::put_varint(p, size);
    if (other_blocks) p = format::put_varint(p, blocks);
    if (!exact || other_samples) p = format::put_varint(p, n_samples);
    if (!exact) p = format::put_varint(p, bytes_per_sample);
    free_ns_ = free_ns;
    used_ += static_cast<size_t>(p - start);
    return true;
  }
  [[gnu::noinline]] void next_block() {
    if (!blocks_.empty()) blocks_.back().resize(used_);
    blocks_.emplace_back(kBlock);
    starts_.push_back(free_ns_);
    tick_ns_.push_back(tick_.ns);
    used_ = 0;
  }
  // Our own bytes, written by write(): no bounds to check.
  static uint64_t get(const uint8_t*& p) {
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
      const uint8_t b = *p++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
  }
  std::vector<std::vector<uint8_t>> blocks_;
  std::vector<uint64_t> starts_;  // by block: the free time its first entry's is relative to
  std::vector<uint64_t> tick_ns_;  // by block: its times' unit
  Ticks tick_;  // the unit of the times written now
  size_t used_ = 0;  // bytes written in the last block
  uint64_t free_ns_ = 0;
  bool exact_ = false;
  // Mode::All's sums for one free time, by slot (blocks 0: empty).
  std::vector<Entry> pending_ = std::vector<Entry>(size_t{1} << kSlotBits, Entry{.blocks = 0});
  std::vector<uint16_t> used_slots_;  // the slots taken, in order
  uint64_t window_blocks_ = 0, window_entries_ = 0, bypass_ = 0;
  uint64_t pending_free_ns_ = 0;
};

}  // namespace

struct AggregateBuilder::Impl {
  // Pass 2: the finished Overview; one pass and pass 2 as it streams: the
  // OverviewBuilder this one drives.
  const Overview* overview = nullptr;
  OverviewBuilder* alongside = nullptr;
  bool streaming = false;  // pass 2 as it streams (alongside is set)
  const reader::SymbolTable& symbols;
  Aggregate a;
  MonotoneClock clock;
  StackTable stack_table;
  std::vector<StackStats> stacks;    // by StackTable id
  std::vector<uint8_t> stack_kept;   // by StackTable id: passes --focus
  std::vector<Metrics> threads;
  // One pass only, by StackTable id / thread id.
  std::vector<PeakTracker> stack_peaks, thread_peaks;
  // 64 Ki ids (2.5 MiB), not the default 16 Ki: on the suite's (a), whose
  // consumers free the producers' blocks, 300 k of its 4.02 M blocks outlived
  // a 16 Ki window and moved to the hash part, each an insert that missed the
  // cache (~60% of on_alloc's samples) and a take from there; 212 k with 64 Ki
  // (~20%). (b) and sqlite3 move few either way (docs/RECORDER.md, 2026-11-25).
  LiveTable<Block, 65536> live;
  bool peak_passed = false;
  // Pass 2 as it streams, by StackTable id / thread id; the peak so far.
  std::vector<PeakSince> stack_since, thread_since;
  SeriesLog series_log;
  std::shared_ptr<void> retired_tables;  // the series replay's (replay_tallies)
  // Pass 2 as it streams, when `tallied`: by StackTable id / thread id /
  // lifetime bucket, and the immediate frees (Tally).
  bool tallied = false;
  std::vector<FreedTally> stack_tally, thread_tally;
  std::array<Tally, LifetimeHistogram::kBuckets> lifetime_tally{};
  Tally immediate_tally;
  bool series_ready = true;  // the bucket width is known (not yet, while streaming)
  uint64_t maxima_seen = 0;
  std::optional<format::AllocId> peak_so_far;

  Impl(const reader::SymbolTable& s, const Query& q, const format::TraceInfo& info)
      : symbols(s), keeps_every_alloc(keeps_every(q.filter)) {
    a.query = q;
    a.estimator = Estimator(info);
    series_log.set_exact(a.estimator.exact());
    series_log.set_tick(info.time_unit_ns());
  }

  const std::vector<ModuleInfo>& modules() const {
    return overview ? overview->modules : alongside->modules_so_far();
  }
  bool one_pass() const { return alongside && !streaming; }
  uint64_t duration() const { return overview ? overview->duration_ns : alongside->last_time(); }
  void set_series_width(uint64_t duration_ns) {
    a.series_bucket_ns = std::max<uint64_t>(1, duration_ns / a.series_buckets + 1);
  }

  bool stack_passes_focus(std::span<const uint64_t> frames) const {
    const Filter& f = a.query.filter;
    if (f.focus.empty()) return true;
    return std::any_of(frames.begin(), frames.end(), [&](uint64_t address) {
      return address_matches(address, symbols, modules(), f.focus);
    });
  }

  uint32_t series_index(uint64_t t) const {
    return static_cast<uint32_t>(std::min<uint64_t>(a.series_buckets - 1, t / a.series_bucket_ns));
  }

  Metrics* thread_metrics(uint32_t thread) {
    if (thread < threads.size()) [[likely]] return &threads[thread];  // (at most kMaxThreads)
    return new_thread(thread);
  }
  // A thread's first block: its slots (none past kMaxThreads: damage).
  Metrics* new_thread(uint32_t thread) {
    if (thread >= kMaxThreads) return nullptr;
    threads.resize(thread + 1);
    if (one_pass()) thread_peaks.resize(thread + 1);
    if (streaming) thread_since.resize(thread + 1);
    if (tallied) thread_tally.resize(thread + 1);
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
    const uint64_t maxima = alongside->new_maxima();
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
  bool freed_before_next_alloc(const format::Free& e, const Block& b) const {
    return e.thread.value == b.thread && e.thread.value < last_alloc.size() &&
           last_alloc[e.thread.value] == e.id.value + 1;
  }

  // Pass 2 as it streams (the follower's) apart from the other modes
  // (on_alloc_any, on_free_any): one function for every mode saved six
  // registers and built a frame of 200 bytes per event, and tested the mode's
  // flags on the way.
  void on_alloc(uint64_t t, const format::Alloc& e, std::optional<uint32_t> stack) {
    if (!streaming) [[unlikely]] return on_alloc_any(t, e, stack);
    note_alloc(e);
    if (!stack) ++a.rejected_blocks;
    const Block b{t, e.size, stack.value_or(kDropped), e.thread.value, e.n_samples, e.bytes_per_sample};
    live.insert(e.id.value, b);
    const Count c = a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
    // (add_alloc gives new_maxima(): a change means this block made a new maximum)
    if (const uint64_t maxima = alongside->add_alloc(e, c); maxima != maxima_seen) {
      maxima_seen = maxima;
      peak_so_far = e.id;
    }
  }
  void note_alloc(const format::Alloc& e) {
    if (e.thread.value < kMaxThreads) {  // (a larger id is damage: no slot, see thread_metrics)
      if (e.thread.value >= last_alloc.size()) last_alloc.resize(e.thread.value + 1);
      last_alloc[e.thread.value] = e.id.value + 1;
    }
  }
  [[gnu::noinline]] void on_alloc_any(uint64_t t, const format::Alloc& e, std::optional<uint32_t> stack) {
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
      if (a.series_buckets > 0)
        add_series(stacks[b.stack].series, series_index(b.time), &SeriesBucket::allocated, c, a.estimator.exact());
    }
    alongside->add_alloc(e, c);  // after track(): a new maximum must follow this block's count
  }

  void on_free(uint64_t t, const format::Free& e) {
    if (!streaming) [[unlikely]] return on_free_any(t, e);
    Block b;
    if (!live.take(e.id.value, b)) return alongside->add_free(e, nullptr);
    const Count c = a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
    if (b.stack != kDropped) {
      const bool at_peak = peak_so_far && e.id.value <= peak_so_far->value;
      if (tallied) [[likely]] {
        settle_tallied(b, t, e.thread.value, at_peak, freed_before_next_alloc(e, b), c);
      } else {
        settle_freed(b, t, e.thread.value, at_peak, freed_before_next_alloc(e, b), c);
      }
    }
    alongside->add_free(e, &c);
  }
  // (Out of line: see on_alloc.)
  [[gnu::noinline]] void settle_freed(const Block& b, uint64_t t, uint32_t free_thread, bool at_peak, bool immediate,
                                      const Count& c) {
    settle(b, t, true, free_thread, at_peak, immediate, &c);
  }
  [[gnu::noinline]] void on_free_any(uint64_t t, const format::Free& e) {
    Block b;
    const bool known = live.take(e.id.value, b);
    if (alongside) {
      if (!known) return alongside->add_free(e, nullptr);
      const Count c = a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
      if (b.stack != kDropped) {
        track(b, c, false);
        end_of(b, c, t, true, e.thread.value, 0, freed_before_next_alloc(e, b));
      }
      return alongside->add_free(e, &c);
    }
    if (!known) return;
    const bool at_peak = overview->peak.alloc && e.id.value <= overview->peak.alloc->value && peak_passed;
    settle(b, t, true, e.thread.value, at_peak, freed_before_next_alloc(e, b));
  }

  // Pass 2: the block's whole story is known; count it if the filter keeps it.
  // `count`: the block's Count, when the caller has it.
  void settle(const Block& b, uint64_t free_t, bool freed, uint32_t free_thread, bool at_peak,
              bool immediate = false, const Count* count = nullptr) {
    const Filter& f = a.query.filter;
    const uint64_t end = freed ? free_t : std::max(duration(), b.time);
    const uint64_t lifetime = end - b.time;
    const uint64_t free_or_never = freed ? free_t : kForever;
    const bool in_window = f.at_peak ? at_peak : window_accepts(f, b.time, free_or_never, freed);
    if (lifetime < f.min_lifetime_ns || lifetime > f.max_lifetime_ns || !in_window) {
      ++a.rejected_blocks;
      return;
    }
    const Count c = count ? *count : a.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
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
    if (a.series_buckets > 0) {
      if (!series_ready) {
        log_series(b, free_t);
      } else {
        add_series(stacks[b.stack].series, series_index(b.time), &SeriesBucket::allocated, c, a.estimator.exact());
      }
    }
    // One count() for these metrics and end_of()'s (other metrics: each
    // Count gets the same additions in the same order as with two).
    end_of(b, c, free_t, freed, free_thread, end, immediate, mask);
  }

  // Pass 2 as it streams, the series' width not yet known: a block's entry in
  // the log (end_of() adds nothing to the series then: the entry stands for both).
  void log_series(const Block& b, uint64_t free_t) {
    series_log.append(b, free_t);
  }

  // settle() of a freed block, when `tallied`: the filter keeps it, in the
  // metrics Allocated and Freed, and Temporary by end_of()'s rule.
  void settle_tallied(const Block& b, uint64_t free_t, uint32_t free_thread, bool at_peak, bool immediate,
                      const Count& c) {
    if (at_peak) peak_since(b, c);
    if (a.series_buckets > 0) log_series(b, free_t);
    const uint64_t lifetime = free_t - b.time;
    const bool temp = temporary(b, free_thread, lifetime);
    FreedTally& s = stack_tally[b.stack];
    s.freed.add(b.size, b.n_samples);
    if (temp) s.temporary.add(b.size, b.n_samples);
    if (thread_metrics(b.thread)) {
      FreedTally& t = thread_tally[b.thread];
      t.freed.add(b.size, b.n_samples);
      if (temp) t.temporary.add(b.size, b.n_samples);
    }
    lifetime_tally[LifetimeHistogram::bucket_of(lifetime)].add(b.size, b.n_samples);
    if (immediate) immediate_tally.add(b.size, b.n_samples);
  }

  // The tallies into the metrics (finish_streaming).
  void add_tallies() {
    auto add = [](Metrics& m, const FreedTally& t) {
      add_masked(m, bit(Metric::Allocated) | bit(Metric::Freed), t.freed.count(), true);
      add_block(m[Metric::Temporary], t.temporary.count(), true);
    };
    for (size_t i = 0; i < stacks.size(); ++i) add(stacks[i].metrics, stack_tally[i]);
    for (size_t i = 0; i < threads.size(); ++i) add(threads[i], thread_tally[i]);
    for (size_t i = 0; i < LifetimeHistogram::kBuckets; ++i)
      add_block(a.lifetimes.freed[i], lifetime_tally[i].count(), true);
    add_block(a.immediate, immediate_tally.count(), true);
  }

  // A freed block is temporary when its own thread freed it soon enough.
  bool temporary(const Block& b, uint32_t free_thread, uint64_t lifetime) const {
    return free_thread == b.thread && lifetime <= a.query.temporary_ns;
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
    if (a.series_buckets > 0 && series_ready) {
      std::vector<SeriesBucket>& series = stacks[b.stack].series;
      if (freed) add_series(series, series_index(free_t), &SeriesBucket::freed, c, exact);
      if (!freed) add_series(series, series_index(b.time), &SeriesBucket::leaked, c, exact);
    }
  }

  // Pass 2 as it streams: what needed the finished Overview, now that the
  // events are over: the series' width and what the freed blocks add to them,
  // the peak's freed part, then the blocks still live, as pass 2 ends.
  void finish_streaming() {
    if (tallied) add_tallies();
    if (a.series_buckets > 0) {
      set_series_width(duration());
      series_ready = true;
      replay_series();
    }
    for (size_t i = 0; i < stacks.size(); ++i) stacks[i].metrics[Metric::Peak] = stack_since[i].at(maxima_seen);
    for (size_t i = 0; i < threads.size(); ++i) threads[i][Metric::Peak] = thread_since[i].at(maxima_seen);
    live.for_each([&](uint64_t id, const Block& b) {
      if (b.stack != kDropped) settle(b, 0, false, b.thread, peak_so_far && id <= peak_so_far->value);
    });
  }

  // What the freed blocks add to the series, from the log (finish_streaming).
  // This is most of what a followed finalise has left after the program's
  // exit, where the machine's CPUs are free: Mode::All's Counts are sums of
  // integers (no weights, estimate.h), the same in any order, so its log is
  // replayed in parts on up to 4 threads, each into buckets of its own that
  // are then added to the stacks' (the same bytes: aggregate_test). A sampled
  // trace's weights are doubles, whose sums depend on the order: one pass.
  void replay_series() {
    const size_t blocks = series_log.blocks();
    const bool exact = a.estimator.exact();
    const size_t parts = exact ? std::clamp<size_t>(std::min<size_t>(usable_cpus(), 4), 1, std::max<size_t>(blocks, 1)) : 1;
    auto first = [&](size_t p) { return blocks * p / parts; };  // part p: blocks [first(p), first(p + 1))
    if (blocks > 0 && exact) {
      // Mode::All: each part counts into a table of its own (a DenseSeries
      // when it fits: no search, no insert), added to the stacks' series at
      // the end; a time's bucket is mostly the last one's (free times are
      // monotone, most blocks are freed in the bucket they were allocated
      // in), found by its bounds, not a division.
      if (DenseSeries::fits(stacks.size(), a.series_buckets)) {
        replay_tallies<DenseSeries>(parts, blocks, first, [&] { return DenseSeries(stacks.size(), a.series_buckets); });
      } else {
        replay_tallies<SparseSeries>(parts, blocks, first, [&] { return SparseSeries(stacks.size()); });
      }
      return;
    }
    using Series = std::vector<std::vector<SeriesBucket>>;  // by stack
    std::vector<Series> partial(parts - 1, Series(stacks.size()));
    in_parts(parts, [&](size_t p) {
      Series* into = p == 0 ? nullptr : &partial[p - 1];
      BucketCache alloc_bucket(a.series_bucket_ns, a.series_buckets);
      BucketCache free_bucket(a.series_bucket_ns, a.series_buckets);
      series_log.read(first(p), first(p + 1), [&](const SeriesLog::Entry& e) {
        const Count c = exact ? e.tally().count()
                              : a.estimator.block(e.size, static_cast<uint32_t>(e.n_samples), e.bytes_per_sample);
        std::vector<SeriesBucket>& series = into ? (*into)[e.stack] : stacks[e.stack].series;
        add_block(bucket_at(series, alloc_bucket(e.alloc_ns)).allocated, c, exact);
        add_block(bucket_at(series, free_bucket(e.free_ns)).freed, c, exact);
      });
    });
    for (const Series& part : partial)
      for (size_t s = 0; s < part.size(); ++s)
        for (const SeriesBucket& b : part[s]) add_bucket(stacks[s].series, b);
    series_log.clear();
  }

  // replay_series() of a Mode::All log's `blocks` on `parts` threads, each
  // into the Table make() gives it (part p's share, if not dealt: blocks
  // [first(p), first(p + 1))).
  template <class Table, class First, class Make>
  void replay_tallies(size_t parts, size_t blocks, const First& first, const Make& make) {
    Parts<Table> tables(parts);
    // A DenseSeries part takes the log's next block (1 MiB) until none is
    // left, not a fixed share: after the exit the symbolisation runs beside
    // the parts, and a part whose core it took kept the others waiting at the
    // join. A SparseSeries part keeps a contiguous share: its rows grow with
    // the buckets it sees, and blocks dealt in turn gave every part every
    // bucket (cc1plus after the exit: ~50 ms slower).
    std::atomic<size_t> next{0};
    in_parts(parts, [&](size_t p) {
      BucketCache alloc_bucket(a.series_bucket_ns, a.series_buckets);
      BucketCache free_bucket(a.series_bucket_ns, a.series_buckets);
      tables[p] = std::make_unique<Table>(make());  // here: its zeroing and page faults beside the others'
      Table& into = *tables[p];
      auto replay = [&](size_t from, size_t to) {
        series_log.read(from, to, [&](const SeriesLog::Entry& e) {
          into.add(e.stack, alloc_bucket(e.alloc_ns), false, e.tally());
          into.add(e.stack, free_bucket(e.free_ns), true, e.tally());
        });
      };
      if constexpr (!Table::kDealt) return replay(first(p), first(p + 1));
      for (size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < blocks;) replay(i, i + 1);
    });
    // The parts' buckets go to the stacks' series in ranges of stacks, on
    // as many threads: this was serial after the parts, with each stack's
    // series reserved again for each part (page faults of the moved series).
    in_parts(parts, [&](size_t p) {
      Table::add_to(tables, stacks, stacks.size() * p / parts, stacks.size() * (p + 1) / parts);
    });
    // Left to the builder's end, not freed here: after a followed program's
    // exit, unmapping the log (~30 MB on the suite's (b)) and the tables was
    // ~4 ms of the serial wait, and `memloupe run` keeps the builder until
    // it exits (finalize/kept_until_exit.h).
    retired_tables = std::make_shared<Parts<Table>>(std::move(tables));
  }

  // fn(p) for each part p < parts: part 0 on this thread, the others on
  // threads of their own; the first failure is rethrown once all are over.
  template <class Fn>
  static void in_parts(size_t parts, Fn&& fn) {
    std::vector<std::exception_ptr> failed(parts);
    std::vector<std::thread> threads;
    for (size_t p = 1; p < parts; ++p) {
      threads.emplace_back([&, p] {
        try {
          fn(p);
        } catch (...) {
          failed[p] = std::current_exception();
        }
      });
    }
    try {
      fn(0);
    } catch (...) {
      failed[0] = std::current_exception();
    }
    for (std::thread& t : threads) t.join();
    for (const std::exception_ptr& f : failed)
      if (f) std::rethrow_exception(f);
  }

  void finish_blocks() {
    if (streaming) {
      finish_streaming();
    } else if (alongside) {
      const uint64_t end = alongside->last_time();
      live.for_each([&](uint64_t, const Block& b) {
        if (b.stack != kDropped) {
          end_of(b, a.estimator.block(b.size, b.n_samples, b.bytes_per_sample), 0, false, b.thread, std::max(end, b.time));
        }
      });
      const uint64_t maxima = alongside->new_maxima();
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
  Aggregate& a = impl_->a;
  if (query.series_buckets > 0) {
    a.series_buckets = query.series_buckets;
    impl_->set_series_width(overview.duration_ns);
  }
}

AggregateBuilder::AggregateBuilder(Streaming, OverviewBuilder& alongside, const format::TraceInfo& info,
                                   const reader::SymbolTable& symbols, const Query& query)
    : impl_(std::make_unique<Impl>(symbols, query, info)) {
  impl_->alongside = &alongside;
  impl_->streaming = true;
  const Filter& f = query.filter;
  impl_->tallied = impl_->a.estimator.exact() && !f.at_peak && !f.window && f.min_lifetime_ns == 0 &&
                   f.max_lifetime_ns == kForever && !query.live_window;
  if (query.series_buckets > 0) {
    impl_->a.series_buckets = query.series_buckets;
    impl_->series_ready = false;
  }
}

AggregateBuilder::AggregateBuilder(OverviewBuilder& alongside, const format::TraceInfo& info,
                                   const reader::SymbolTable& symbols, const Query& query)
    : impl_(std::make_unique<Impl>(symbols, query, info)) {
  impl_->alongside = &alongside;
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
  } else {
    if (auto t = event_time(event)) s.clock(*t);
    if (s.alongside) s.alongside->add(event);
  }
}

void AggregateBuilder::add(const format::Free& free) {
  Impl& s = *impl_;
  s.on_free(s.clock(free.time_ns), free);
}

void AggregateBuilder::add_interned(const format::Alloc& alloc, uint32_t stack, bool is_new,
                                    std::span<const uint64_t> frames) {
  Impl& s = *impl_;
  if (is_new) {
    // The caller numbers stacks as intern() does, so the ids agree.
    const uint32_t id = s.intern(frames);
    assert(id == stack);
    (void)id;
  }
  const uint64_t t = s.clock(alloc.time_ns);
  if (s.keeps_every_alloc) return s.on_alloc(t, alloc, stack);
  s.on_alloc(t, alloc, s.accepts(t, alloc) ? s.kept(stack) : std::nullopt);
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
