// Pass 1: the filter-independent facts of a trace (see model.h).
#include <algorithm>
#include <cstdio>

#include "analysis/event_time.h"
#include "analysis/live_table.h"
#include "analysis/model.h"
#include "analysis/overview_state.h"
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

ThreadInfo* OverviewState::thread(format::ThreadId id) {
  if (id.value >= kMaxThreads) return nullptr;
  while (o.threads.size() <= id.value) {
    o.threads.push_back(ThreadInfo{format::ThreadId{static_cast<uint32_t>(o.threads.size())}});
  }
  thread_slots = o.threads.size();
  return &o.threads[id.value];
}

void OverviewState::new_thread(format::ThreadId id) { thread(id); }

void OverviewState::new_peak(uint64_t t, format::AllocId id) {
  peak_bytes = heap_bytes();
  exact_peak = live.bytes + 1;
  o.peak = Peak{t, id, o.estimator.exact() ? objects_of_blocks(live) : live};
  ++new_maxima;
}

void OverviewState::mapped_exact(uint64_t t, uint64_t size, uint32_t n_samples, bool alloc) {
  const Count c = o.estimator.block(size, n_samples);
  if (alloc) return mapped_alloc(t, c);
  mapped_free(t, c);
}

void OverviewState::estimated_alloc(uint64_t t, const format::Alloc& a) {
  counted_alloc(t, a, o.estimator.block(a.size, a.n_samples, a.bytes_per_sample));
}

void OverviewState::estimated_free(uint64_t t, format::Func func, uint64_t size, uint32_t n_samples,
                                   uint32_t bytes_per_sample) {
  const Count c = o.estimator.block(size, n_samples, bytes_per_sample);
  counted_free(t, &c, func);
}

void OverviewState::mapped_free(uint64_t t, const Count& c) {
  mapped_live -= c;
  mapped_changed();
  mapped.change(t, mapped_bytes(), 0, o.estimator.bytes_value(c));
}

void OverviewState::mapped_alloc(uint64_t t, const Count& c) {
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

// The accounting is OverviewState's (overview_state.h); add() keeps the live
// blocks itself.
struct OverviewBuilder::Impl : OverviewState {
  LiveTable<LiveBlock> live_blocks;
  RssBuilder rss;

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

OverviewState& OverviewBuilder::state() { return *impl_; }

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
