// Cost of one backtrace at the allocation site: memloupe's fast unwinder (cached CFI
// rules) against libunwind's unw_backtrace and glibc's backtrace(), same run, same
// stacks. Each unwinder writes exactly `depth` frames from a stack deeper than that.
//
//   unwind_bench [--benchmark_filter=...]     prints the usual table, then ratios.
#include <dlfcn.h>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "recorder/unwind/eh_frame.h"
#include "recorder/unwind/proc_maps.h"
#include "recorder/unwind/tail_memo.h"
#include "recorder/unwind/unwind.h"
#include "recorder/unwind/unwind_stats.h"

namespace {

using memloupe::recorder::unwind_here;
namespace detail = memloupe::recorder::unwind_detail;

constexpr int kMaxDepth = 128;
// The benchmark's own frames below the recursion may be few; recurse a little past
// the depth so that every unwinder is cut off at exactly `depth` frames.
constexpr int kExtraFrames = 4;

enum class Unwinder { kFast, kFastNoMemo, kLibunwind, kGlibc };

// libunwind.so exports its own weak `backtrace`; link order would make a plain call
// measure libunwind twice. Ask for glibc's by its symbol version.
using BacktraceFn = int (*)(void**, int);
BacktraceFn glibc_backtrace() {
  static const auto fn = reinterpret_cast<BacktraceFn>(dlvsym(RTLD_DEFAULT, "backtrace", "GLIBC_2.2.5"));
  return fn;
}

// A stack of distinct functions with frames of different sizes, as real code has:
// every level is its own function with its own unwind rule (and cache entry).
using Body = void (*)(void*);

template <int N>
__attribute__((noinline)) void level(int remaining, Body body, void* arg) {
  char pad[16 * (N % 4) + 8] = {};
  benchmark::DoNotOptimize(pad);
  if constexpr (N > 0) {
    if (remaining > 0) {
      level<N - 1>(remaining - 1, body, arg);
      asm volatile("" ::: "memory");  // not a tail call: every level keeps its frame
      return;
    }
  }
  body(arg);
}

// Runs `fn` at the bottom of `depth` extra distinct frames.
template <typename Fn>
void at_depth(int depth, Fn& fn) {
  level<kMaxDepth + kExtraFrames>(depth, [](void* f) { (*static_cast<Fn*>(f))(); }, &fn);
}

template <Unwinder kWhich>
void BM_Unwind(benchmark::State& state) {
  const auto depth = static_cast<size_t>(state.range(0));
  uint64_t frames[kMaxDepth];
  void* ips[kMaxDepth];
  size_t total = 0;
  const uint64_t fallbacks_before = detail::fallback_count();
  detail::set_tail_memo_enabled(kWhich != Unwinder::kFastNoMemo);
  auto loop = [&] {
    for (auto _ : state) {
      size_t n = 0;
      if constexpr (kWhich == Unwinder::kFast || kWhich == Unwinder::kFastNoMemo) {
        n = unwind_here(frames, depth, 0);
      } else if constexpr (kWhich == Unwinder::kLibunwind) {
        n = static_cast<size_t>(unw_backtrace(ips, static_cast<int>(depth)));
      } else {
        n = static_cast<size_t>(glibc_backtrace()(ips, static_cast<int>(depth)));
      }
      benchmark::DoNotOptimize(frames);
      benchmark::DoNotOptimize(ips);
      total += n;
    }
  };
  at_depth(static_cast<int>(depth) + kExtraFrames, loop);
  if (total != depth * state.iterations()) state.SkipWithError("stack shallower than depth");
  state.counters["frames"] = static_cast<double>(depth);
  state.counters["per_frame"] = benchmark::Counter(
      static_cast<double>(total), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  detail::set_tail_memo_enabled(true);
  if constexpr (kWhich == Unwinder::kFast || kWhich == Unwinder::kFastNoMemo) {
    state.counters["fallbacks"] = static_cast<double>(detail::fallback_count() - fallbacks_before);
  }
}

// Closer to an allocation-heavy program than unwinding one stack over and over:
// allocations alternate between two call sites, each a few distinct frames deep,
// below a shared outer stack. The memo then reuses the outer part while the inner
// frames change every time.
template <int kSite>
__attribute__((noinline)) size_t site(uint64_t* frames, size_t depth, int inner) {
  char pad[24 * kSite + 8] = {};
  benchmark::DoNotOptimize(pad);
  const size_t n = inner == 0 ? unwind_here(frames, depth, 0) : site<kSite>(frames, depth, inner - 1);
  benchmark::DoNotOptimize(n);
  return n;
}

void BM_AlternatingSites(benchmark::State& state) {
  const auto depth = static_cast<size_t>(state.range(0));
  detail::set_tail_memo_enabled(state.range(1) != 0);
  uint64_t frames[kMaxDepth];
  size_t total = 0;
  bool flip = false;
  const detail::MemoStats before = detail::memo_stats();
  auto loop = [&] {
    for (auto _ : state) {
      total += flip ? site<1>(frames, depth, 2) : site<2>(frames, depth, 3);
      flip = !flip;
    }
  };
  at_depth(static_cast<int>(depth) + kExtraFrames, loop);
  detail::set_tail_memo_enabled(true);
  if (total != depth * state.iterations()) state.SkipWithError("stack shallower than depth");
  const detail::MemoStats after = detail::memo_stats();
  state.counters["reused"] = benchmark::Counter(static_cast<double>(after.full - before.full),
                                                benchmark::Counter::kAvgIterations);
  state.counters["per_frame"] = benchmark::Counter(
      static_cast<double>(total), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// The cache-miss path alone: computing one rule from .eh_frame (module lookup, FDE
// search, CIE/FDE parse, CFA program), over the return addresses of a real stack.
void BM_ComputeRuleOnMiss(benchmark::State& state) {
  uint64_t frames[32];
  size_t n = 0;
  auto grab = [&] { n = unwind_here(frames, 32, 0); };
  at_depth(8, grab);
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(detail::compute_rule(frames[i] - 1));
    i = i + 1 == n ? 0 : i + 1;
  }
}

// What a thread's first unwind pays once (and again each time its stack grows past
// the mapping it saw): finding its stack in /proc/self/maps.
void BM_FirstUnwindInThreadMapsRead(benchmark::State& state) {
  int local = 0;
  detail::Mapping m;
  for (auto _ : state) {
    benchmark::DoNotOptimize(detail::find_mapping(reinterpret_cast<uintptr_t>(&local), m));
  }
}

BENCHMARK(BM_Unwind<Unwinder::kFast>)->Name("fast")->Arg(8)->Arg(32)->Arg(128);
BENCHMARK(BM_Unwind<Unwinder::kFastNoMemo>)->Name("fast_no_memo")->Arg(8)->Arg(32)->Arg(128);
BENCHMARK(BM_Unwind<Unwinder::kLibunwind>)->Name("libunwind")->Arg(8)->Arg(32)->Arg(128);
BENCHMARK(BM_Unwind<Unwinder::kGlibc>)->Name("glibc_backtrace")->Arg(8)->Arg(32)->Arg(128);
BENCHMARK(BM_AlternatingSites)
    ->Name("alternating_sites")
    ->ArgNames({"depth", "memo"})
    ->Args({32, 1})
    ->Args({32, 0});
BENCHMARK(BM_ComputeRuleOnMiss)->Name("fast_cache_miss_one_rule");
BENCHMARK(BM_FirstUnwindInThreadMapsRead)->Name("fast_thread_first_unwind_maps_read");

// Prints the usual console table, then ns/frame per depth and the ratios to fast.
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      const std::string name = r.run_name.function_name;
      const std::string depth = r.run_name.args;
      // Only the one-argument runs (depth) go in the table.
      if (!depth.empty() && depth.find(':') == std::string::npos && depth.find('/') == std::string::npos) {
        ns_[depth][name] = r.GetAdjustedCPUTime();
      }
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nCPU ns per frame (same run)\n%-6s %10s %10s %10s %10s %16s %16s\n", "depth",
                "fast", "no_memo", "libunwind", "glibc", "libunwind/fast",
                "libunw/no_memo");
    for (const auto& row : ns_) {
      const std::string& depth = row.first;
      const std::map<std::string, double>& by_name = row.second;
      const double d = std::stod(depth);
      auto per_frame = [&](const char* n) {
        const auto it = by_name.find(n);
        return it == by_name.end() ? 0.0 : it->second / d;
      };
      const double fast = per_frame("fast"), plain = per_frame("fast_no_memo");
      const double lib = per_frame("libunwind");
      std::printf("%-6s %10.2f %10.2f %10.2f %10.2f %15.1fx %15.1fx\n", depth.c_str(), fast, plain,
                  lib, per_frame("glibc_backtrace"), fast > 0 ? lib / fast : 0.0,
                  plain > 0 ? lib / plain : 0.0);
    }
  }

 private:
  std::map<std::string, std::map<std::string, double>> ns_;  // depth -> name -> ns
};

}  // namespace

int main(int argc, char** argv) {
  // As heaptrack and bytehound configure it: per-thread cache, no global lock.
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  memloupe::recorder::unwind_load_fallback();  // unwind_here's fallback, as in the recorder
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}
