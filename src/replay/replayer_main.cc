// memloupe-replayer OPFILE: replays a prepared op file (op_file.h) against
// whatever allocator the process has, the one `memloupe replay` preloads, and
// prints its measurements on stdout as `key value` lines (run_replayer.h reads
// them).
//
// Its own memory stays out of the allocator's way: the slot table (block
// pointers), the op windows, the per-thread progress words and counters are
// mmap'd; it links nothing of the project's but the header-only function list,
// and makes no heap allocation of its own after start-up other than what
// pthread_create does (glibc allocates a thread's TLS vector with the process's
// malloc, as it did in the program). docs/REPLAY.md says what is measured how.
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>

#include "replay/replayer_calls.h"
#include "replay/replayer_clock.h"
#include "replay/replayer_ops.h"
#include "replay/replayer_sync.h"

namespace memloupe::replay {
namespace {

struct alignas(64) ThreadStats {
  uint64_t call_ticks = 0;  // inside allocator calls, bracket cost subtracted
  uint64_t allocs = 0;      // Alloc and Realloc ops run
  uint64_t frees = 0;
  uint64_t failed = 0;      // allocations the allocator refused
  uint64_t waits = 0;       // Wait ops that found the other thread behind
  uint64_t violations = 0;  // a free of an empty slot, an allocation into a full one
};

// A slot whose allocation the allocator refused: its free is skipped. (Empty
// slots are null, so a free that ran before its allocation is seen.)
void* const kRefused = reinterpret_cast<void*>(uintptr_t{1});

struct Shared {
  OpSource src;
  void** slots = nullptr;
  Progress* progress = nullptr;
  ThreadStats* stats = nullptr;
  Op* windows = nullptr;  // kOpWindow per thread
  uint64_t* probes = nullptr;  // RSS at each Probe op
  Gate gate;
  uint64_t bracket_ticks = 0;
  bool read_failed = false;
};
Shared g;

// Reads a /proc file into a stack buffer, NUL-terminated (no heap, no stdio).
template <size_t N>
bool read_proc(const char* path, char (&buf)[N]) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::read(fd, buf, N - 1);
  ::close(fd);
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

// The resident set: /proc/self/statm's second field, in pages.
uint64_t resident_bytes() {
  char buf[256];
  if (!read_proc("/proc/self/statm", buf)) return 0;
  char* end = nullptr;
  std::strtoull(buf, &end, 10);
  return std::strtoull(end, nullptr, 10) * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

size_t alignment_of(const Op& op) { return op.align_log2 == 0 ? alignof(std::max_align_t) : size_t{1} << op.align_log2; }

// The one place a call is timed: two clock reads around it.
template <class Fn>
inline auto timed(ThreadStats& st, Fn fn) {
  const uint64_t t0 = ticks();
  auto r = fn();
  const uint64_t dt = ticks() - t0;
  st.call_ticks += dt > g.bracket_ticks ? dt - g.bracket_ticks : 0;
  return r;
}

void run_op(uint32_t thread, const Op& op, ThreadStats& st) {
  const auto f = static_cast<format::Func>(op.func);
  void*& slot = g.slots[op.slot];
  switch (op.kind) {
    // The order checks cost a compare on a value the op loads anyway; the tests
    // run cross-thread traces many times and require zero violations.
    case OpKind::Alloc: {
      st.violations += slot != nullptr;
      void* p = timed(st, [&] { return call_alloc(f, op.size, alignment_of(op)); });
      ++st.allocs;
      if (p == nullptr) {
        ++st.failed;
        slot = kRefused;
        return;
      }
      touch(p, op.size);
      slot = p;
      return;
    }
    case OpKind::Free: {
      void* p = slot;
      ++st.frees;
      slot = nullptr;
      if (p == nullptr) {
        ++st.violations;
        return;
      }
      if (p == kRefused) return;
      timed(st, [&] {
        call_free(f, p, op.size, alignment_of(op));
        return 0;
      });
      return;
    }
    case OpKind::Realloc: {
      void* old = slot;
      ++st.allocs;
      if (old == nullptr) ++st.violations;
      if (old == kRefused) old = nullptr;
      void* p = timed(st, [&] { return call_realloc(old, op.size); });
      if (p == nullptr) {
        ++st.failed;
        return;  // the old block stays in its slot, and is freed as it
      }
      touch(p, op.size);
      slot = p;
      return;
    }
    case OpKind::Wait:
      st.waits += g.progress[op.slot].wait_until(static_cast<uint32_t>(op.size));
      return;
    case OpKind::Probe:
      g.probes[op.slot] = resident_bytes();
      return;
  }
  (void)thread;
}

void run_thread(uint32_t t) {
  const OpThread& th = g.src.threads[t];
  Op* window = g.windows + size_t{t} * kOpWindow;
  ThreadStats& st = g.stats[t];
  Progress& progress = g.progress[t];
  for (uint64_t i = 0; i < th.ops; i += kOpWindow) {
    const size_t n = std::min<uint64_t>(th.ops - i, kOpWindow);
    if (!read_ops(g.src, th.first_op + i, n, window)) {
      g.read_failed = true;
      break;
    }
    for (size_t j = 0; j < n; ++j) {
      run_op(t, window[j], st);
      if (window[j].flags & kPublish) progress.publish(static_cast<uint32_t>(i + j + 1));
    }
  }
  // Whatever anyone waits for on this thread is done now (also after a read failure).
  progress.publish(static_cast<uint32_t>(th.ops));
}

void* thread_main(void* arg) {
  const auto t = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(arg));
  g.gate.wait();
  run_thread(t);
  return nullptr;
}

// The median cost of an empty bracket, subtracted from each timed call.
uint64_t measure_bracket() {
  uint64_t samples[101];
  for (uint64_t& s : samples) {
    const uint64_t t0 = ticks();
    asm volatile("" ::: "memory");
    s = ticks() - t0;
  }
  std::sort(std::begin(samples), std::end(samples));
  return samples[50];
}

// A "key: N kB" line of /proc/self/status (VmHWM), in bytes.
uint64_t status_bytes(const char* key) {
  char buf[4096];
  if (!read_proc("/proc/self/status", buf)) return 0;
  const char* at = std::strstr(buf, key);
  if (at == nullptr) return 0;
  return std::strtoull(at + std::strlen(key), nullptr, 10) * 1024;
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }

void print(const char* key, unsigned long long value) {
  char line[128];
  const int n = std::snprintf(line, sizeof line, "%s %llu\n", key, value);
  (void)!::write(1, line, static_cast<size_t>(n));
}
void print(const char* key, double value) {
  char line[128];
  const int n = std::snprintf(line, sizeof line, "%s %.9g\n", key, value);
  (void)!::write(1, line, static_cast<size_t>(n));
}

int run(const char* path) {
  if (!open_ops(path, g.src)) return 2;
  const OpFileHeader& h = g.src.header;
  g.slots = static_cast<void**>(map_private(h.slots * sizeof(void*)));
  g.progress = static_cast<Progress*>(map_private(h.threads * sizeof(Progress)));
  g.stats = static_cast<ThreadStats*>(map_private(h.threads * sizeof(ThreadStats)));
  g.windows = static_cast<Op*>(map_private(size_t{h.threads} * kOpWindow * sizeof(Op)));
  g.probes = static_cast<uint64_t*>(map_private(h.probes * sizeof(uint64_t)));
  if (!g.slots || !g.progress || !g.stats || !g.windows || !g.probes) {
    std::fputs("memloupe-replayer: out of memory for its tables\n", stderr);
    return 2;
  }
  g.bracket_ticks = measure_bracket();

  // Thread 0 (the first recorded thread, the program's main thread) runs on
  // this thread: glibc gives the main thread its brk heap, others mmap'd arenas.
  pthread_t* ids = static_cast<pthread_t*>(map_private(h.threads * sizeof(pthread_t)));
  for (uint32_t t = 1; t < h.threads; ++t) {
    if (pthread_create(&ids[t], nullptr, thread_main, reinterpret_cast<void*>(uintptr_t{t})) != 0) {
      std::fputs("memloupe-replayer: cannot create a thread\n", stderr);
      return 2;
    }
  }
  const uint64_t rss_before = resident_bytes();
  rusage ru0, ru1;
  getrusage(RUSAGE_SELF, &ru0);
  const uint64_t ns0 = monotonic_ns(), tk0 = ticks();
  g.gate.release();
  run_thread(0);
  for (uint32_t t = 1; t < h.threads; ++t) pthread_join(ids[t], nullptr);
  const uint64_t ns1 = monotonic_ns(), tk1 = ticks();
  getrusage(RUSAGE_SELF, &ru1);
  if (g.read_failed) {
    std::fputs("memloupe-replayer: reading the ops failed during the replay\n", stderr);
    return 2;
  }

  ThreadStats sum;
  for (uint32_t t = 0; t < h.threads; ++t) {
    sum.call_ticks += g.stats[t].call_ticks;
    sum.allocs += g.stats[t].allocs;
    sum.frees += g.stats[t].frees;
    sum.failed += g.stats[t].failed;
    sum.waits += g.stats[t].waits;
    sum.violations += g.stats[t].violations;
  }
  const double ns_per_tick = tk1 > tk0 ? static_cast<double>(ns1 - ns0) / static_cast<double>(tk1 - tk0) : 1.0;
  print("threads", static_cast<unsigned long long>(h.threads));
  print("alloc_calls", static_cast<unsigned long long>(sum.allocs));
  print("free_calls", static_cast<unsigned long long>(sum.frees));
  print("failed_calls", static_cast<unsigned long long>(sum.failed));
  print("waits", static_cast<unsigned long long>(sum.waits));
  print("order_violations", static_cast<unsigned long long>(sum.violations));
  print("wall_s", static_cast<double>(ns1 - ns0) * 1e-9);
  print("cpu_s", seconds(ru1.ru_utime) + seconds(ru1.ru_stime) - seconds(ru0.ru_utime) - seconds(ru0.ru_stime));
  print("alloc_time_s", static_cast<double>(sum.call_ticks) * ns_per_tick * 1e-9);
  print("clock_overhead_ns", static_cast<double>(g.bracket_ticks) * ns_per_tick);
  print("baseline_rss_bytes", static_cast<unsigned long long>(rss_before));
  // The kernel folds per-thread RSS counts into VmHWM lazily, so a fresh
  // VmRSS can read a little above it.
  const uint64_t final_rss = resident_bytes();
  print("peak_rss_bytes", static_cast<unsigned long long>(std::max(status_bytes("VmHWM:"), final_rss)));
  print("final_rss_bytes", static_cast<unsigned long long>(final_rss));
  print("minor_faults", static_cast<unsigned long long>(ru1.ru_minflt - ru0.ru_minflt));
  for (uint64_t i = 0; i < h.probes; ++i) {
    char line[96];
    const int n = std::snprintf(line, sizeof line, "probe_rss %llu %llu\n", static_cast<unsigned long long>(i),
                                static_cast<unsigned long long>(g.probes[i]));
    (void)!::write(1, line, static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace
}  // namespace memloupe::replay

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fputs("usage: memloupe-replayer OPFILE (run by `memloupe replay`)\n", stderr);
    return 1;
  }
  return memloupe::replay::run(argv[1]);
}

// Sanitizer builds (the asan preset): the blocks the program never freed stay
// allocated to the end on purpose (they are in final_rss_bytes), so
// LeakSanitizer's report of them would only fail the run. Unused otherwise.
extern "C" const char* __lsan_default_options() { return "detect_leaks=0"; }
