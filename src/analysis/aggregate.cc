// Pass 2: the Query applied to every allocation (see model.h).
//
// A block's fate is only known when it ends (its lifetime, whether it was live
// in the window), so each block waits in a LiveTable until its Free, or the end
// of the trace, and is then "settled": tested against the filter and counted.
#include <algorithm>

#include "analysis/event_time.h"
#include "analysis/frame_names.h"
#include "analysis/live_table.h"
#include "analysis/model.h"
#include "analysis/stack_table.h"

namespace memloupe::analysis {
namespace {

constexpr uint32_t kMaxThreads = 1u << 20;

struct Block {
  uint64_t time = 0;
  uint64_t size = 0;
  uint32_t stack = 0;
  uint32_t thread = 0;
  uint32_t n_samples = 0;
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

void add_masked(Metrics& m, unsigned mask, const Count& c) {
  for (size_t i = 0; i < kMetricCount; ++i) {
    if (mask & (1u << i)) m.counts[i] += c;
  }
}

void add_series(std::vector<SeriesBucket>& series, uint32_t index, Count SeriesBucket::*field, const Count& c) {
  auto it = std::lower_bound(series.begin(), series.end(), index,
                             [](const SeriesBucket& b, uint32_t i) { return b.index < i; });
  if (it == series.end() || it->index != index) it = series.insert(it, SeriesBucket{index});
  (*it).*field += c;
}

}  // namespace

size_t LifetimeHistogram::bucket_of(uint64_t lifetime_ns) {
  return lifetime_ns == 0 ? 0 : static_cast<size_t>(64 - __builtin_clzll(lifetime_ns));
}

struct AggregateBuilder::Impl {
  const Overview& overview;
  const reader::SymbolTable& symbols;
  Aggregate a;
  MonotoneClock clock;
  StackTable stack_table;
  std::vector<StackStats> stacks;  // by StackTable id
  std::vector<uint8_t> stack_kept;  // by StackTable id: passes --focus
  std::vector<Metrics> threads;
  LiveTable<Block> live;
  bool peak_passed = false;

  Impl(const Overview& o, const reader::SymbolTable& s, const Query& q) : overview(o), symbols(s) {
    a.query = q;
    a.estimator = o.estimator;
    if (q.series_buckets > 0) {
      a.series_buckets = q.series_buckets;
      a.series_bucket_ns = std::max<uint64_t>(1, o.duration_ns / q.series_buckets + 1);
    }
  }

  bool stack_passes_focus(std::span<const uint64_t> frames) const {
    const Filter& f = a.query.filter;
    if (f.focus.empty()) return true;
    return std::any_of(frames.begin(), frames.end(), [&](uint64_t address) {
      return address_matches(address, symbols, overview.modules, f.focus);
    });
  }

  uint32_t series_index(uint64_t t) const {
    return static_cast<uint32_t>(std::min<uint64_t>(a.series_buckets - 1, t / a.series_bucket_ns));
  }

  void on_alloc(uint64_t t, const format::Alloc& e) {
    if (overview.peak.alloc && *overview.peak.alloc == e.id) peak_passed = true;
    const Filter& f = a.query.filter;
    const bool too_late = f.window && f.test != WindowTest::Freed && t > f.window->end_ns;
    if ((f.thread && *f.thread != e.thread) || e.size < f.min_size || e.size > f.max_size || too_late) {
      ++a.rejected_blocks;
      return;
    }
    auto [stack, is_new] = stack_table.intern(e.backtrace);
    if (is_new) {
      stacks.emplace_back();
      stack_kept.push_back(stack_passes_focus(e.backtrace) ? 1 : 0);
    }
    if (!stack_kept[stack]) {
      ++a.rejected_blocks;
      return;
    }
    live.insert(e.id.value, Block{t, e.size, stack, e.thread.value, e.n_samples});
  }

  void on_free(uint64_t t, const format::Free& e) {
    Block b;
    if (live.take(e.id.value, b)) {
      const bool at_peak = overview.peak.alloc && e.id.value <= overview.peak.alloc->value && peak_passed;
      settle(b, t, true, e.thread.value, at_peak);
    }
  }

  void settle(const Block& b, uint64_t free_t, bool freed, uint32_t free_thread, bool at_peak) {
    const Filter& f = a.query.filter;
    const uint64_t end = freed ? free_t : std::max(overview.duration_ns, b.time);
    const uint64_t lifetime = end - b.time;
    const uint64_t free_or_never = freed ? free_t : kForever;
    if (lifetime < f.min_lifetime_ns || lifetime > f.max_lifetime_ns ||
        !window_accepts(f, b.time, free_or_never, freed)) {
      ++a.rejected_blocks;
      return;
    }
    const Count c = a.estimator.block(b.size, b.n_samples);
    unsigned mask = bit(Metric::Allocated);
    if (freed) mask |= bit(Metric::Freed);
    if (!freed) mask |= bit(Metric::Leaked);
    if (live_in(a.query.live_window, b.time, free_or_never)) mask |= bit(Metric::Live);
    if (at_peak) mask |= bit(Metric::Peak);
    if (freed && free_thread == b.thread && lifetime <= a.query.temporary_ns) mask |= bit(Metric::Temporary);

    StackStats& s = stacks[b.stack];
    add_masked(s.metrics, mask, c);
    add_masked(a.totals, mask, c);
    if (b.thread < kMaxThreads) {
      if (threads.size() <= b.thread) threads.resize(b.thread + 1);
      add_masked(threads[b.thread], mask, c);
    }
    if (freed) {
      a.lifetimes.freed[LifetimeHistogram::bucket_of(lifetime)] += c;
    } else {
      a.lifetimes.never_freed += c;
    }
    if (a.series_buckets > 0) {
      add_series(s.series, series_index(b.time), &SeriesBucket::allocated, c);
      if (freed) add_series(s.series, series_index(free_t), &SeriesBucket::freed, c);
      if (!freed) add_series(s.series, series_index(b.time), &SeriesBucket::leaked, c);
    }
  }
};

AggregateBuilder::AggregateBuilder(const Overview& overview, const reader::SymbolTable& symbols,
                                   const Query& query)
    : impl_(std::make_unique<Impl>(overview, symbols, query)) {}
AggregateBuilder::~AggregateBuilder() = default;
AggregateBuilder::AggregateBuilder(AggregateBuilder&&) noexcept = default;

void AggregateBuilder::add(const format::Event& event) {
  Impl& s = *impl_;
  if (const auto* alloc = std::get_if<format::Alloc>(&event)) {
    s.on_alloc(s.clock(alloc->time_ns), *alloc);
  } else if (const auto* free = std::get_if<format::Free>(&event)) {
    s.on_free(s.clock(free->time_ns), *free);
  } else if (auto t = event_time(event)) {
    s.clock(*t);
  }
}

Aggregate AggregateBuilder::finish() && {
  Impl& s = *impl_;
  const std::optional<format::AllocId> peak = s.overview.peak.alloc;
  s.live.for_each([&](uint64_t id, const Block& b) {
    s.settle(b, 0, false, b.thread, peak && id <= peak->value);
  });
  // Keep the stacks that selected something, with their frames, densely numbered.
  Aggregate& a = s.a;
  for (uint32_t id = 0; id < s.stacks.size(); ++id) {
    StackStats& st = s.stacks[id];
    if (st.metrics[Metric::Allocated].empty()) continue;
    const std::span<const uint64_t> frames = s.stack_table.frames(id);
    st.frames_begin = static_cast<uint32_t>(a.frame_pool.size());
    st.frames_size = static_cast<uint32_t>(frames.size());
    a.frame_pool.insert(a.frame_pool.end(), frames.begin(), frames.end());
    a.stacks.push_back(std::move(st));
  }
  for (uint32_t t = 0; t < s.threads.size(); ++t) {
    if (!s.threads[t][Metric::Allocated].empty()) a.threads.push_back(ThreadStats{format::ThreadId{t}, s.threads[t]});
  }
  return std::move(a);
}

}  // namespace memloupe::analysis
