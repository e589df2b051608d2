// Pass 1: the filter-independent facts of a trace (see model.h).
#include <algorithm>
#include <cstdio>

#include "analysis/event_time.h"
#include "analysis/live_table.h"
#include "analysis/model.h"
#include "analysis/timeline_builder.h"

namespace memloupe::analysis {
namespace {

// Thread ids are dense from 0; anything past this is not a real thread and is
// not given a slot (a damaged or hostile trace must not make us allocate).
constexpr uint32_t kMaxThreads = 1u << 20;

struct LiveBlock {
  uint64_t size = 0;
  uint32_t n_samples = 0;
  uint32_t bytes_per_sample = 0;  // format::Alloc's (0: the header's)
};

std::string hex(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b);
    out += buf;
  }
  return out;
}

}  // namespace

struct OverviewBuilder::Impl {
  Overview o;
  MonotoneClock clock;
  LiveTable<LiveBlock> live_blocks;
  Count live;
  double peak_bytes = -1;
  uint64_t new_maxima = 0;
  TimelineBuilder heap;
  // A Mode::All trace's heap, counted in integers: its Counts' bytes are exact,
  // and their conversions to double (two per Alloc and Free) and the doubles'
  // sums were ~8 instructions of every Alloc and Free. Its peaks are compared
  // in integers too: `exact_peak` is peak_bytes + 1 (0: none yet, as
  // peak_bytes' -1), `exact_combined_peak` is combined_peak_bytes.
  ExactTimelineBuilder exact_heap;
  uint64_t exact_peak = 0;
  uint64_t exact_combined_peak = 0;
  RssBuilder rss;
  // Mapped memory (model.h, MappedMemory), kept apart from the heap.
  Count mapped_live;
  // mapped_bytes() as of the last change to mapped_live: note_combined() adds
  // it to the heap's bytes per Alloc, and mapped blocks are rare (a u64 to
  // double conversion per Alloc was a tenth of counted_alloc's instructions).
  double mapped_live_bytes = 0;
  double mapped_peak_bytes = -1;
  TimelineBuilder mapped;

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

  // o.threads.size(), tested per Alloc (the size of a vector of 64-byte
  // ThreadInfos is a subtraction and a shift), as the Aggregate's thread_slots.
  size_t thread_slots = 0;
  ThreadInfo* thread(format::ThreadId id) {
    if (id.value >= kMaxThreads) return nullptr;
    while (o.threads.size() <= id.value) {
      o.threads.push_back(ThreadInfo{format::ThreadId{static_cast<uint32_t>(o.threads.size())}});
    }
    thread_slots = o.threads.size();
    return &o.threads[id.value];
  }

  void on(uint64_t t, const format::Alloc& a) {
    const Count c = o.estimator.block(a.size, a.n_samples, a.bytes_per_sample);
    live_blocks.insert(a.id.value, LiveBlock{a.size, a.n_samples, a.bytes_per_sample});
    counted_alloc(t, a, c);
  }
  void on(uint64_t t, const format::Free& f) {
    LiveBlock b;
    if (!live_blocks.take(f.id.value, b)) return counted_free(t, nullptr, f.func);
    const Count c = o.estimator.block(b.size, b.n_samples, b.bytes_per_sample);
    counted_free(t, &c, f.func);
  }
  // The heap accounting of an Alloc / Free whose block's Count is known.
  // Inlined into add_alloc() and add_free() too, the streaming Aggregate's
  // calls per event: a second call there saved and restored six registers.
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
  // counted_alloc() of a Mode::All block, whose Count is made of its
  // fields (Estimator::block): added field by field, none made (a 64-byte
  // Count built and passed was ~14 instructions, one per Alloc and one per
  // Free of the streaming pass).
  [[gnu::always_inline]] void exact_alloc(uint64_t t, const format::Alloc& a) {
    alloc_seen(a);
    if (format::func_maps(a.func)) return mapped_exact(t, a.size, a.n_samples, true);
    add_exact_block(o.allocated, a.size, a.n_samples);
    add_exact_block(live, a.size, a.n_samples);
    exact_heap_grew(t, a.id, a.size);
  }
  void alloc_seen(const format::Alloc& a) {
    ++o.alloc_events;
    if (a.thread.value >= thread_slots) [[unlikely]] new_thread(a.thread);
  }
  // A Mode::All heap grew by the block `id` of `bytes`, now `live`.
  void exact_heap_grew(uint64_t t, format::AllocId id, uint64_t bytes) {
    exact_heap.change(t, live.bytes, bytes, 0);
    if (live.bytes >= exact_peak) new_peak(t, id);
    note_exact_combined(t);
  }
  [[gnu::noinline]] void new_thread(format::ThreadId id) { thread(id); }
  // Out of line, as mapped_alloc(): the rare paths' registers and copies
  // made counted_alloc() save six registers per Alloc.
  [[gnu::noinline]] void new_peak(uint64_t t, format::AllocId id) {
    peak_bytes = heap_bytes();
    exact_peak = live.bytes + 1;
    o.peak = Peak{t, id, o.estimator.exact() ? objects_of_blocks(live) : live};
    ++new_maxima;
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
  // counted_free() of a known Mode::All block (exact_alloc()'s rule).
  [[gnu::always_inline]] void exact_free(uint64_t t, uint64_t size, uint32_t n_samples, format::Func func) {
    ++o.free_events;
    if (format::func_maps(func)) return mapped_exact(t, size, n_samples, false);
    remove_exact_block(live, size, n_samples);
    exact_heap.change(t, live.bytes, 0, size);
  }
  // exact_alloc()'s and exact_free()'s mapping blocks, their Count made out
  // of line (a Count on the stack gave the usual case a frame).
  [[gnu::noinline]] void mapped_exact(uint64_t t, uint64_t size, uint32_t n_samples, bool alloc) {
    const Count c = o.estimator.block(size, n_samples);
    if (alloc) return mapped_alloc(t, c);
    mapped_free(t, c);
  }
  [[gnu::noinline]] uint64_t estimated_alloc(uint64_t t, const format::Alloc& a) {
    counted_alloc(t, a, o.estimator.block(a.size, a.n_samples, a.bytes_per_sample));
    return new_maxima;
  }
  [[gnu::noinline]] void estimated_free(uint64_t t, const format::Free& f, uint64_t size, uint32_t n_samples,
                                       uint32_t bytes_per_sample) {
    const Count c = o.estimator.block(size, n_samples, bytes_per_sample);
    counted_free(t, &c, f.func);
  }
  [[gnu::noinline]] void mapped_free(uint64_t t, const Count& c) {
    mapped_live -= c;
    mapped_changed();
    mapped.change(t, mapped_bytes(), 0, o.estimator.bytes_value(c));
  }
  [[gnu::noinline]] void mapped_alloc(uint64_t t, const Count& c) {
    o.mapped.allocated += c;
    mapped_live += c;
    mapped_changed();
    mapped.change(t, mapped_bytes(), o.estimator.bytes_value(c), 0);
    if (mapped_bytes() > mapped_peak_bytes) {
      mapped_peak_bytes = mapped_bytes();
      o.mapped.peak = mapped_live;
      o.mapped.peak_ns = t;
    }
    note_combined(t, heap_bytes());
  }
  void on(uint64_t t, const format::ThreadStart& e) {
    if (ThreadInfo* th = thread(e.thread)) {
      th->os_tid = e.os_tid;
      th->start_ns = t;
    }
  }
  void on(uint64_t, const format::ThreadName& e) {
    if (ThreadInfo* th = thread(e.thread)) th->name = e.name;
  }
  void on(uint64_t t, const format::ThreadEnd& e) {
    if (ThreadInfo* th = thread(e.thread)) th->end_ns = t;
  }
  void on(uint64_t t, const format::ModuleLoad& e) {
    o.modules.push_back(ModuleInfo{e.start, e.end, e.load_bias, std::string(e.path), hex(e.build_id), t});
  }
  void on(uint64_t t, const format::ModuleUnload& e) {
    for (auto it = o.modules.rbegin(); it != o.modules.rend(); ++it) {
      if (it->start == e.start && it->unload_ns == kForever) {
        it->unload_ns = t;
        break;
      }
    }
  }
  void on(uint64_t t, const format::RssSample& e) {
    o.peak_rss = std::max(o.peak_rss, e.rss_bytes);
    rss.add(format::RssSample{t, e.rss_bytes});
  }
  void on(uint64_t t, const format::Marker& e) {
    if (o.markers.size() < kMaxMarkers) o.markers.push_back(MarkerInfo{e.thread, t, std::string(e.name)});
  }
  void on(uint64_t, const format::CallTotals& e) { o.call_totals = e; }
  void on(uint64_t, const format::TraceEnd& e) { o.end_reason = e.reason; }
  void on(uint64_t, const format::SymbolDef&) {}
  void on(uint64_t, const format::Promote&) {}
  void on(uint64_t t, const format::RateChange& e) {
    if (o.rate_changes.size() < kMaxMarkers) o.rate_changes.push_back(RateChangeInfo{t, e.bytes_per_sample});
  }
  void on(uint64_t, const format::DepthChange&) {}
};

OverviewBuilder::OverviewBuilder(const format::TraceInfo& info) : impl_(std::make_unique<Impl>()) {
  impl_->o.info = info;
  impl_->o.estimator = Estimator(info);
}
OverviewBuilder::~OverviewBuilder() = default;
OverviewBuilder::OverviewBuilder(OverviewBuilder&&) noexcept = default;

// o.events counts the events other than Allocs and Frees here; finish()
// adds alloc_events and free_events (one increment per Alloc and Free, not
// two: the driver's calls are most of the events).
void OverviewBuilder::add(const format::Event& event) {
  Impl& s = *impl_;
  if (!std::holds_alternative<format::Alloc>(event) && !std::holds_alternative<format::Free>(event)) ++s.o.events;
  std::visit(
      [&s](const auto& e) {
        if constexpr (requires { e.time_ns; }) {
          s.on(s.clock(e.time_ns), e);
        } else {
          s.on(s.clock.last(), e);
        }
      },
      event);
}

MonotoneClock& OverviewBuilder::clock() { return impl_->clock; }

uint64_t OverviewBuilder::add_alloc(uint64_t t, const format::Alloc& a, const Count& c) {
  Impl& s = *impl_;
  s.counted_alloc(t, a, c);
  return s.new_maxima;
}

void OverviewBuilder::add_free(uint64_t t, const format::Free& f, const Count* c) {
  Impl& s = *impl_;
  s.counted_free(t, c, f.func);
}

// (A sampled trace's blocks out of line: their Count on the stack gave the
// exact path a frame.)
uint64_t OverviewBuilder::add_alloc(uint64_t t, const format::Alloc& a) {
  Impl& s = *impl_;
  if (!s.o.estimator.exact()) [[unlikely]] return s.estimated_alloc(t, a);
  s.exact_alloc(t, a);
  return s.new_maxima;
}

void OverviewBuilder::add_free(uint64_t t, const format::Free& f, uint64_t size, uint32_t n_samples,
                               uint32_t bytes_per_sample) {
  Impl& s = *impl_;
  if (!s.o.estimator.exact()) [[unlikely]] return s.estimated_free(t, f, size, n_samples, bytes_per_sample);
  s.exact_free(t, size, n_samples, f.func);
}

uint64_t OverviewBuilder::new_maxima() const { return impl_->new_maxima; }
const std::vector<ModuleInfo>& OverviewBuilder::modules_so_far() const { return impl_->o.modules; }

Overview OverviewBuilder::finish(std::optional<Error> error) && {
  Impl& s = *impl_;
  s.o.duration_ns = s.clock.last();
  s.o.events += s.o.alloc_events + s.o.free_events;  // (see add())
  s.o.time_inversions = s.clock.inversions();
  s.o.error = std::move(error);
  if (s.o.estimator.exact()) {  // (exact_alloc() and exact_free() leave the objects)
    s.o.allocated = objects_of_blocks(s.o.allocated);
    s.live = objects_of_blocks(s.live);
  }
  s.o.leaked = s.live;
  s.o.heap = s.o.estimator.exact() ? std::move(s.exact_heap).finish(s.o.duration_ns)
                                    : std::move(s.heap).finish(s.o.duration_ns);
  if (s.o.mapped.any()) {
    s.o.mapped.leaked = s.mapped_live;
    s.o.mapped.series = std::move(s.mapped).finish(s.o.duration_ns);
  }
  s.o.rss = std::move(s.rss).finish();
  return std::move(s.o);
}

}  // namespace memloupe::analysis
