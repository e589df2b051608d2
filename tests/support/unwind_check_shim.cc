// An LD_PRELOAD library for unwind_real_program_test: on every kEvery-th malloc of a
// real program (python3, sqlite3, git: Debian builds, no frame pointers), it unwinds
// with the fast unwinder and with libunwind and compares them frame by frame. At exit
// it writes "compared fallbacks mismatches" to $MEMLOUPE_UNWIND_CHECK_OUT, followed by
// the first mismatching pair of stacks, if any.
//
// With MEMLOUPE_UNWIND_CHECK_COST=fast (or fast_no_memo, or libunwind) it instead
// unwinds 64 frames on every malloc with that unwinder only, to time what unwinding
// adds to a workload.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "recorder/unwind/fast_unwind.h"
#include "recorder/unwind/libunwind_backtrace.h"
#include "recorder/unwind/tail_memo.h"
#include "recorder/unwind/unwind.h"

extern "C" void* __libc_malloc(size_t);

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr uint64_t kEvery = 7;
constexpr size_t kMaxFrames = 64;

std::atomic<uint64_t> g_calls{0}, g_compared{0}, g_fallbacks{0}, g_mismatches{0};
constinit thread_local bool tls_busy __attribute__((tls_model("initial-exec"))) = false;

enum class Mode : uint8_t { kCompare, kFastOnly, kLibunwindOnly };
Mode g_mode = Mode::kCompare;

__attribute__((constructor)) void read_mode() {
  tls_busy = true;  // dlopen allocates: those calls pass straight through
  libunwind_load();
  tls_busy = false;
  const char* cost = std::getenv("MEMLOUPE_UNWIND_CHECK_COST");
  if (cost == nullptr) return;
  if (std::strcmp(cost, "fast") == 0) g_mode = Mode::kFastOnly;
  if (std::strcmp(cost, "fast_no_memo") == 0) {
    g_mode = Mode::kFastOnly;
    set_tail_memo_enabled(false);
  }
  if (std::strcmp(cost, "libunwind") == 0) g_mode = Mode::kLibunwindOnly;
}

std::atomic<bool> g_have_example{false};
uint64_t g_example_fast[kMaxFrames], g_example_slow[kMaxFrames];
size_t g_example_fast_n = 0, g_example_slow_n = 0;
// The first stack the fast unwinder handed to libunwind, and where it stopped.
std::atomic<bool> g_have_fallback{false};
uint64_t g_fallback_stack[kMaxFrames];
size_t g_fallback_n = 0, g_fallback_fast_n = 0;

// Both unwinders start in this function; their out[0] are their two call sites here.
__attribute__((noinline)) void compare_here() {
  uint64_t fast[kMaxFrames], slow[kMaxFrames];
  const FastResult r = fast_unwind_here(fast, kMaxFrames, 0);
  const size_t n = libunwind_backtrace(slow, kMaxFrames, 0);
  asm volatile("" ::: "memory");
  g_compared.fetch_add(1, std::memory_order_relaxed);
  if (r.outcome == Outcome::kFallback) {
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
    if (!g_have_fallback.exchange(true)) {
      for (size_t i = 0; i < n; ++i) g_fallback_stack[i] = slow[i];
      g_fallback_fast_n = r.frames;
      g_fallback_n = n;
    }
    return;
  }
  bool same = r.frames == n;
  for (size_t i = 1; same && i < n; ++i) same = fast[i] == slow[i];
  if (same) return;
  g_mismatches.fetch_add(1, std::memory_order_relaxed);
  if (!g_have_example.exchange(true)) {
    for (size_t i = 0; i < r.frames; ++i) g_example_fast[i] = fast[i];
    for (size_t i = 0; i < n; ++i) g_example_slow[i] = slow[i];
    g_example_fast_n = r.frames;
    g_example_slow_n = n;
  }
}

void write_all(int fd, const char* s, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<size_t>(w);
  }
}

void print_stack(int fd, const char* name, const uint64_t* frames, size_t n) {
  char line[64];
  for (size_t i = 0; i < n; ++i) {
    const int len = std::snprintf(line, sizeof line, "%s %zu %#lx\n", name, i,
                                  static_cast<unsigned long>(frames[i]));
    write_all(fd, line, static_cast<size_t>(len));
  }
}

__attribute__((destructor)) void report() {
  const char* path = std::getenv("MEMLOUPE_UNWIND_CHECK_OUT");
  if (path == nullptr) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char line[128];
  const int len = std::snprintf(line, sizeof line, "%lu %lu %lu\n",
                                static_cast<unsigned long>(g_compared.load()),
                                static_cast<unsigned long>(g_fallbacks.load()),
                                static_cast<unsigned long>(g_mismatches.load()));
  write_all(fd, line, static_cast<size_t>(len));
  if (g_have_fallback.load()) {
    const int l = std::snprintf(line, sizeof line, "fallback after %zu frames\n", g_fallback_fast_n);
    write_all(fd, line, static_cast<size_t>(l));
    print_stack(fd, "fallback", g_fallback_stack, g_fallback_n);
  }
  if (g_have_example.load()) {
    print_stack(fd, "fast", g_example_fast, g_example_fast_n);
    print_stack(fd, "libunwind", g_example_slow, g_example_slow_n);
  }
  ::close(fd);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

extern "C" void* malloc(size_t size) {
  using namespace memloupe::recorder::unwind_detail;
  if (g_mode != Mode::kCompare && !tls_busy) {
    tls_busy = true;
    uint64_t frames[kMaxFrames];
    if (g_mode == Mode::kFastOnly) {
      memloupe::recorder::unwind_here(frames, kMaxFrames, 0);
    } else {
      libunwind_backtrace(frames, kMaxFrames, 0);
    }
    asm volatile("" : : "r"(frames) : "memory");
    tls_busy = false;
    return __libc_malloc(size);
  }
  if (!tls_busy && g_calls.fetch_add(1, std::memory_order_relaxed) % kEvery == 0) {
    tls_busy = true;  // libunwind may allocate; those calls pass straight through
    compare_here();
    tls_busy = false;
  }
  return __libc_malloc(size);
}
