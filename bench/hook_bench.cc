// What the recorder's hooks add to malloc/free, measured in one process.
//
// The preload library is dlopen'ed from copies of libmemloupe_preload.so, each
// configured differently through the environment it reads at load time, and its
// malloc/free are called through function pointers exactly as glibc's are:
//   glibc      — libc's malloc/free (the baseline)
//   unsampled  — recording, MEMLOUPE_EVERY=1TiB: every call takes the fast path
//   sampled    — recording at the default 512 KiB mean
//   all        — MEMLOUPE_MODE=all: every call recorded with its backtrace
//   every_call — sampled mode with MEMLOUPE_EVERY=1: every block is sampled, so
//                a pair costs what one sample costs (unwind, lock, encode, table)
//
// BM_AddedCostPerPair interleaves batches of glibc and unsampled pairs and keeps
// the fastest batch of each, which is robust to the noise of a shared machine;
// its `added_ns` counter is the headline number (target: <= 1.5 ns).
//
// Before/after a change to the recorder: MEMLOUPE_HOOK_BENCH_BEFORE=<another
// build's libmemloupe_preload.so> loads that library too, and
// BM_BeforeAfterPerPair interleaves glibc, it and this build's, per mode, in the
// same process: `after_minus_before_ns` is what the change costs per pair.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct Allocator {
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
};

Allocator g_glibc, g_unsampled, g_sampled, g_all, g_every_call;
fs::path g_scratch;

// Loads a private copy of the preload library with `env` set while it
// initialises (it reads its configuration then).
Allocator load_recorder(const std::string& name, const std::vector<std::pair<std::string, std::string>>& env,
                        fs::path library = fs::path(MEMLOUPE_BINARY_DIR) / "bin" / "libmemloupe_preload.so") {
  const fs::path copy = g_scratch / ("lib" + name + ".so");
  fs::copy_file(library, copy, fs::copy_options::overwrite_existing);
  for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
  setenv("MEMLOUPE_OUTPUT", (g_scratch / (name + ".trace")).c_str(), 1);
  void* handle = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  for (const auto& [k, v] : env) unsetenv(k.c_str());
  unsetenv("MEMLOUPE_OUTPUT");
  if (handle == nullptr) {
    std::fprintf(stderr, "hook_bench: cannot load %s: %s\n", copy.c_str(), dlerror());
    std::exit(1);
  }
  return {reinterpret_cast<void* (*)(size_t)>(dlsym(handle, "malloc")),
          reinterpret_cast<void (*)(void*)>(dlsym(handle, "free"))};
}

Allocator pick(int which) {
  switch (which) {
    case 0: return g_glibc;
    case 1: return g_unsampled;
    case 2: return g_sampled;
    case 3: return g_all;
    default: return g_every_call;
  }
}
const char* kNames[] = {"glibc", "unsampled", "sampled_512KiB", "all", "every_call"};

// One malloc/free pair of a fixed size.
void BM_Pair(benchmark::State& state) {
  const Allocator a = pick(static_cast<int>(state.range(0)));
  const size_t size = static_cast<size_t>(state.range(1));
  for (auto _ : state) {
    void* p = a.malloc(size);
    benchmark::DoNotOptimize(p);
    a.free(p);
  }
  state.SetLabel(kNames[state.range(0)]);
}
BENCHMARK(BM_Pair)->ArgsProduct({{0, 1, 2, 4}, {64}});

// This thread's CPU time: batches preempted by other processes (the machine is
// shared) are not charged for the time they did not run.
double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

double batch_ns(const Allocator& a, size_t size, int pairs) {
  const double t0 = thread_cpu_ns();
  for (int i = 0; i < pairs; ++i) {
    void* p = a.malloc(size);
    benchmark::DoNotOptimize(p);
    a.free(p);
  }
  return (thread_cpu_ns() - t0) / pairs;
}

void BM_AddedCostPerPair(benchmark::State& state) {
  constexpr int kBatch = 20'000;
  const size_t size = static_cast<size_t>(state.range(0));
  double best_glibc = 1e9, best_hook = 1e9;
  for (auto _ : state) {
    best_glibc = std::min(best_glibc, batch_ns(g_glibc, size, kBatch));
    best_hook = std::min(best_hook, batch_ns(g_unsampled, size, kBatch));
  }
  state.counters["glibc_ns"] = best_glibc;
  state.counters["hooked_ns"] = best_hook;
  state.counters["added_ns"] = best_hook - best_glibc;
  state.counters["ratio"] = best_hook / best_glibc;
}
BENCHMARK(BM_AddedCostPerPair)->Arg(64)->Iterations(200);

// MEMLOUPE_HOOK_BENCH_BEFORE's library, configured as g_unsampled, g_all and
// g_every_call are (pick()'s numbering).
Allocator g_before[5];

void BM_BeforeAfterPerPair(benchmark::State& state) {
  constexpr int kBatch = 20'000;
  const int which = static_cast<int>(state.range(0));
  const size_t size = static_cast<size_t>(state.range(1));
  double best_glibc = 1e9, best_before = 1e9, best_after = 1e9;
  int turn = 0;  // rotated: whichever runs after another pays for its heap churn
  for (auto _ : state) {
    for (int k = 0; k < 3; ++k) {
      switch ((turn + k) % 3) {
        case 0: best_glibc = std::min(best_glibc, batch_ns(g_glibc, size, kBatch)); break;
        case 1: best_before = std::min(best_before, batch_ns(g_before[which], size, kBatch)); break;
        default: best_after = std::min(best_after, batch_ns(pick(which), size, kBatch)); break;
      }
    }
    turn = (turn + 1) % 3;
  }
  state.counters["glibc_ns"] = best_glibc;
  state.counters["before_added_ns"] = best_before - best_glibc;
  state.counters["after_added_ns"] = best_after - best_glibc;
  state.counters["after_minus_before_ns"] = best_after - best_before;
  state.SetLabel(kNames[which]);
}

// A malloc-heavy loop like the reference measurements: 4096 live slots (or up to
// kMaxLive: frees spread over a larger heap, where the free filter's accesses miss
// the cache unless it is small), sizes 16..4095, each operation frees a slot and
// refills it from 1..10 frames deep.
constexpr uint32_t kMaxLive = 1 << 16;
struct Workload {
  std::vector<uint32_t> sizes, slots, depths;
  Workload() {
    std::mt19937 rng(42);
    for (int i = 0; i < 1 << 16; ++i) {
      sizes.push_back(16 + rng() % 4080);
      slots.push_back(rng() % kMaxLive);  // taken modulo the run's live count
      depths.push_back(1 + rng() % 10);
    }
  }
};

__attribute__((noinline)) void* allocate_at_depth(const Allocator& a, size_t size, uint32_t depth) {
  if (depth > 1) {
    void* p = allocate_at_depth(a, size, depth - 1);
    benchmark::DoNotOptimize(p);
    return p;
  }
  return a.malloc(size);
}

// The workload's state for one allocator: its live blocks and position.
struct WorkloadRun {
  const Allocator a;
  std::vector<void*> live;  // a power of two <= kMaxLive
  size_t i = 0;
  explicit WorkloadRun(Allocator alloc, size_t n_live = 4096) : a(alloc), live(n_live, nullptr) {}
  ~WorkloadRun() {
    for (void* p : live) a.free(p);
  }
  void step(const Workload& w) {
    const size_t k = i++ & 0xffff;
    void*& slot = live[w.slots[k] & (live.size() - 1)];
    a.free(slot);
    slot = allocate_at_depth(a, w.sizes[k], w.depths[k]);
  }
  double batch_ns(const Workload& w, int ops) {
    const double t0 = thread_cpu_ns();
    for (int n = 0; n < ops; ++n) step(w);
    return (thread_cpu_ns() - t0) / ops;
  }
};

const Workload& workload() {
  static const Workload w;
  return w;
}

void BM_Workload(benchmark::State& state) {
  WorkloadRun run(pick(static_cast<int>(state.range(0))));
  for (auto _ : state) run.step(workload());
  state.SetLabel(kNames[state.range(0)]);
}
BENCHMARK(BM_Workload)->DenseRange(0, 3);

// The workload under glibc and under the recorder in interleaved batches,
// fastest batch of each: what the recorder costs on a malloc-heavy loop.
void BM_WorkloadOverhead(benchmark::State& state) {
  constexpr int kOps = 20'000;
  const int which = static_cast<int>(state.range(0));
  const auto n_live = static_cast<size_t>(state.range(1));
  WorkloadRun base(g_glibc, n_live), traced(pick(which), n_live);
  double best_base = 1e9, best_traced = 1e9;
  bool base_first = true;  // alternated: whichever runs second pays for the other's heap churn
  for (auto _ : state) {
    const double b0 = base_first ? base.batch_ns(workload(), kOps) : 0;
    best_traced = std::min(best_traced, traced.batch_ns(workload(), kOps));
    best_base = std::min(best_base, base_first ? b0 : base.batch_ns(workload(), kOps));
    base_first = !base_first;
  }
  state.counters["glibc_ns_per_op"] = best_base;
  state.counters["traced_ns_per_op"] = best_traced;
  state.counters["overhead_pct"] = 100 * (best_traced / best_base - 1);
  state.SetLabel(kNames[which]);
}
BENCHMARK(BM_WorkloadOverhead)->Args({0, 4096})->Iterations(100);  // A/A: the method's own bias
BENCHMARK(BM_WorkloadOverhead)->Args({2, 4096})->Iterations(100);
BENCHMARK(BM_WorkloadOverhead)->Args({1, 4096})->Iterations(100);
BENCHMARK(BM_WorkloadOverhead)->Args({3, 4096})->Iterations(10);
// 65536 live blocks (~130 MiB): frees land all over the heap and the filter.
BENCHMARK(BM_WorkloadOverhead)->Args({0, kMaxLive})->Iterations(100);
BENCHMARK(BM_WorkloadOverhead)->Args({2, kMaxLive})->Iterations(100);
BENCHMARK(BM_WorkloadOverhead)->Args({1, kMaxLive})->Iterations(100);

}  // namespace

int main(int argc, char** argv) {
  // The library's thread-locals are initial-exec (it is meant to be preloaded);
  // dlopen'ing its copies (four, seven with MEMLOUPE_HOOK_BENCH_BEFORE, ~11 KiB
  // of TLS each, most of it the unwinder's memo) needs more static TLS than glibc
  // reserves by default. 64 KiB was too little for seven.
  if (getenv("MEMLOUPE_HOOK_BENCH_CHILD") == nullptr) {
    setenv("MEMLOUPE_HOOK_BENCH_CHILD", "1", 1);
    setenv("GLIBC_TUNABLES", "glibc.rtld.optional_static_tls=131072", 1);
    execv("/proc/self/exe", argv);
    std::perror("hook_bench: re-exec");
    return 1;
  }
  g_scratch = fs::temp_directory_path() / ("hook_bench." + std::to_string(getpid()));
  fs::create_directories(g_scratch);
  g_glibc = {&std::malloc, &std::free};
  g_unsampled = load_recorder("unsampled", {{"MEMLOUPE_EVERY", "1TiB"}});
  g_sampled = load_recorder("sampled", {});
  g_all = load_recorder("all", {{"MEMLOUPE_MODE", "all"}});
  g_every_call = load_recorder("every_call", {{"MEMLOUPE_EVERY", "1"}});
  if (const char* before = getenv("MEMLOUPE_HOOK_BENCH_BEFORE")) {
    g_before[1] = load_recorder("before_unsampled", {{"MEMLOUPE_EVERY", "1TiB"}}, before);
    g_before[3] = load_recorder("before_all", {{"MEMLOUPE_MODE", "all"}}, before);
    g_before[4] = load_recorder("before_every_call", {{"MEMLOUPE_EVERY", "1"}}, before);
    benchmark::RegisterBenchmark("BM_BeforeAfterPerPair", BM_BeforeAfterPerPair)->Args({1, 64})->Iterations(200);
    benchmark::RegisterBenchmark("BM_BeforeAfterPerPair", BM_BeforeAfterPerPair)->Args({3, 64})->Iterations(20);
    benchmark::RegisterBenchmark("BM_BeforeAfterPerPair", BM_BeforeAfterPerPair)->Args({4, 64})->Iterations(20);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  fs::remove_all(g_scratch, ec);
  return 0;
}
