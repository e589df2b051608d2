// The retention analysis of a heap snapshot: blocks per second through the
// dominators (Lengauer–Tarjan), reachable bytes per root, leak kinds and the
// whole analyze_retention(), on a synthetic heap shaped like a program's.
//
// Competitor in the same run: reachable bytes by one breadth-first search per
// root (what a tool without the component masks would do), against
// reachable_per_root()'s one walk of the condensed graph carrying 64 roots per
// mask word. `ratio` = the naive search's time / this one's.
//
// The heap (1.1 million blocks, 1,000 roots): a shared registry of 200,000
// blocks (a binary tree with parent pointers, so it is one big strongly
// connected component) pointed to by 100 globals; 900 more roots each owning a
// private list of 1,000 blocks whose nodes also point at a registry entry;
// 1 in 8 pointers interior.
#include <benchmark/benchmark.h>

#include <chrono>
#include <random>
#include <vector>

#include "retention/dominators.h"
#include "retention/leak_kinds.h"
#include "retention/reachable.h"
#include "retention/retention.h"

namespace {

using namespace memloupe::retention;

const HeapSnapshot& heap() {
  static HeapSnapshot s;
  if (!s.blocks.empty()) return s;
  constexpr uint32_t kRegistry = 200'000, kShared = 100, kOwners = 900, kList = 1000;
  const uint32_t roots = kShared + kOwners, blocks = kRegistry + kOwners * kList;
  std::mt19937_64 rng(3);
  s.roots.resize(roots);
  for (uint32_t b = 0; b < blocks; ++b) s.blocks.push_back({0x10000 + 64ull * b, 16 + rng() % 200, {b}});
  std::vector<std::vector<std::pair<uint32_t, bool>>> out(roots + blocks);
  auto edge = [&](uint32_t from, uint32_t to) { out[from].push_back({to, rng() % 8 == 0}); };
  for (uint32_t r = 0; r < kShared; ++r) edge(r, 0);
  for (uint32_t b = 1; b < kRegistry; ++b) {
    edge(roots + (b - 1) / 2, b);  // parent -> child
    edge(roots + b, (b - 1) / 2);  // child -> parent
  }
  for (uint32_t o = 0; o < kOwners; ++o) {
    const uint32_t first = kRegistry + o * kList;
    edge(kShared + o, first);
    for (uint32_t i = 0; i < kList; ++i) {
      if (i + 1 < kList) edge(roots + first + i, first + i + 1);
      edge(roots + first + i, static_cast<uint32_t>(rng() % kRegistry));
    }
  }
  for (uint32_t from = 0; from < out.size(); ++from) {
    for (auto [to, interior] : out[from]) s.edges.push_back({from, to, interior});
  }
  return s;
}

const NodeGraph& graph() {
  static const NodeGraph g = build_node_graph(heap());
  return g;
}

void set_rate(benchmark::State& state) {
  state.counters["blocks/s"] = benchmark::Counter(static_cast<double>(heap().blocks.size()) * state.iterations(),
                                                  benchmark::Counter::kIsRate);
}

void BM_Dominators(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(compute_dominators(graph()));
  set_rate(state);
}

void BM_LeakKinds(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(classify_leaks(heap(), graph()));
  set_rate(state);
}

void BM_AnalyzeRetention(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(analyze_retention(heap()));
  set_rate(state);
}

// One search per root, as the competitor.
std::vector<Amount> reachable_naive(const HeapSnapshot& s, const NodeGraph& g) {
  std::vector<Amount> out(g.roots);
  std::vector<uint32_t> seen(g.vertex_count(), UINT32_MAX), queue;
  for (uint32_t r = 0; r < g.roots; ++r) {
    queue.assign(1, g.vertex_of_root(r));
    for (size_t head = 0; head < queue.size(); ++head) {
      for (uint32_t w : g.succ.neighbours(queue[head])) {
        if (seen[w] == r) continue;
        seen[w] = r;
        out[r].add(s.blocks[g.block_of(w)].size);
        queue.push_back(w);
      }
    }
  }
  return out;
}

void BM_ReachablePerRoot(benchmark::State& state) {
  // Both in the same run, timed alike: the ratio is the naive search's time over ours.
  double ours = 0, naive = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    const std::vector<Amount> a = reachable_per_root(heap(), graph());
    auto t1 = std::chrono::steady_clock::now();
    const std::vector<Amount> b = reachable_naive(heap(), graph());
    auto t2 = std::chrono::steady_clock::now();
    if (a != b) state.SkipWithError("the two searches disagree");
    ours += std::chrono::duration<double>(t1 - t0).count();
    naive += std::chrono::duration<double>(t2 - t1).count();
  }
  state.counters["ours_s"] = ours / static_cast<double>(state.iterations());
  state.counters["naive_s"] = naive / static_cast<double>(state.iterations());
  state.counters["ratio"] = naive / ours;
}

BENCHMARK(BM_Dominators)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_LeakKinds)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_AnalyzeRetention)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_ReachablePerRoot)->Unit(benchmark::kMillisecond)->Iterations(2);

}  // namespace

BENCHMARK_MAIN();
