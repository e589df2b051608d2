// Analysis throughput: events per second through the model's passes, on an
// in-memory event stream shaped like an --all trace of a busy program (no
// decoding, so this measures the model alone; `memloupe summary` adds the
// reader's cost on top).
//
// The stream: 4 threads, 2 million events (allocs and frees), 200 distinct
// stacks 8-40 frames deep chosen with a skew, sizes 16 B - 64 KiB skewed small;
// most blocks die within a few hundred events, one in 50 lives long, one in
// 1000 never dies. Like a real trace, ids are dense and times increase.
#include <benchmark/benchmark.h>

#include <deque>
#include <random>
#include <vector>

#include "analysis/model.h"

namespace {

using namespace memloupe;

struct Stream {
  format::TraceInfo info;
  reader::SymbolTable symbols;
  std::vector<format::Event> events;
  std::deque<std::vector<uint64_t>> stacks;
};

const Stream& stream(format::Mode mode) {
  static Stream streams[2];
  Stream& s = streams[mode == format::Mode::All ? 0 : 1];
  if (!s.events.empty()) return s;
  s.info.mode = mode;
  s.info.bytes_per_sample = mode == format::Mode::All ? 0 : 64 * 1024;
  std::mt19937_64 rng(5);
  for (int i = 0; i < 200; ++i) {
    std::vector<uint64_t> frames(8 + rng() % 33);
    for (size_t f = 0; f < frames.size(); ++f) frames[f] = 0x400000 + (f * 131 + (f < 3 ? i : 0)) * 16;
    s.stacks.push_back(std::move(frames));
    s.symbols[s.stacks.back()[0]] = {reader::OwnedFrame{"site" + std::to_string(i), "a.cc", 1, 0}};
  }
  struct Pending {
    uint64_t due;
    format::AllocId id;
    uint32_t thread;
  };
  std::vector<Pending> pending;
  uint64_t t = 0, next_id = 0;
  while (s.events.size() < 2'000'000) {
    t += 1 + rng() % 40;
    const uint32_t thread = static_cast<uint32_t>(rng() % 4);
    if (!pending.empty() && (pending.back().due <= t || rng() % 2 == 0)) {
      // Free the most recently due block (LIFO-ish, like real programs).
      const Pending p = pending.back();
      pending.pop_back();
      s.events.push_back(format::Free{p.id, format::ThreadId{p.thread}, t, format::Func::Free});
      continue;
    }
    format::Alloc a;
    a.id = format::AllocId{next_id++};
    a.thread = format::ThreadId{thread};
    a.time_ns = t;
    a.size = 16u << (rng() % 13 * (rng() % 3 == 0 ? 1 : 0) + rng() % 3);
    a.n_samples = mode == format::Mode::All ? 1 : 1 + static_cast<uint32_t>(a.size / (64 * 1024));
    const size_t site = std::min<size_t>(rng() % 200, rng() % 200);
    a.backtrace = s.stacks[site];
    s.events.push_back(a);
    const uint64_t fate = rng() % 1000;
    if (fate == 0) continue;  // never freed
    const uint64_t life = fate < 20 ? 1'000'000 + rng() % 10'000'000 : rng() % 20'000;
    const Pending p{t + life, a.id, thread};
    // Keep `pending` sorted by due time, latest first, so back() is the next due.
    auto it = std::lower_bound(pending.begin(), pending.end(), p,
                               [](const Pending& x, const Pending& y) { return x.due > y.due; });
    pending.insert(it, p);
  }
  s.events.push_back(format::TraceEnd{t + 1, format::EndReason::Exit});
  return s;
}

void run(benchmark::State& state, format::Mode mode, analysis::Passes passes) {
  const Stream& s = stream(mode);
  for (auto _ : state) {
    Expected<analysis::Model> m = analysis::analyze_events(s.info, s.symbols, s.events, {}, passes);
    benchmark::DoNotOptimize(m.value().aggregate.totals);
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(s.events.size()), benchmark::Counter::kIsIterationInvariantRate);
}

void overview_only(benchmark::State& state) {
  const Stream& s = stream(format::Mode::All);
  for (auto _ : state) {
    analysis::OverviewBuilder b(s.info);
    for (const format::Event& e : s.events) b.add(e);
    benchmark::DoNotOptimize(std::move(b).finish().peak);
  }
  state.counters["events/s"] =
      benchmark::Counter(static_cast<double>(s.events.size()), benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK(overview_only)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, all_one_pass, format::Mode::All, analysis::Passes::Fewest)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, all_two_passes, format::Mode::All, analysis::Passes::Two)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(run, sampled_one_pass, format::Mode::Sampled, analysis::Passes::Fewest)
    ->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
