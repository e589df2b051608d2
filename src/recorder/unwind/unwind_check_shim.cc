// An LD_PRELOAD library for unwind_real_program_test: on every kEvery-th malloc of a
// real program (python3, sqlite3, git: Debian builds, no frame pointers), it unwinds
// with the fast unwinder and with libunwind and compares them frame by frame. At exit
// it writes "compared fallbacks mismatches" to $MEMLOUPE_UNWIND_CHECK_OUT, followed by
// the first mismatching pair of stacks, if any.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "recorder/unwind/fast_unwind.h"
#include "recorder/unwind/libunwind_backtrace.h"

extern "C" void* __libc_malloc(size_t);

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr uint64_t kEvery = 7;
constexpr size_t kMaxFrames = 64;

std::atomic<uint64_t> g_calls{0}, g_compared{0}, g_fallbacks{0}, g_mismatches{0};
constinit thread_local bool tls_busy __attribute__((tls_model("initial-exec"))) = false;

std::atomic<bool> g_have_example{false};
uint64_t g_example_fast[kMaxFrames], g_example_slow[kMaxFrames];
size_t g_example_fast_n = 0, g_example_slow_n = 0;

// Both unwinders start in this function; their out[0] are their two call sites here.
__attribute__((noinline)) void compare_here() {
  uint64_t fast[kMaxFrames], slow[kMaxFrames];
  const FastResult r = fast_unwind_here(fast, kMaxFrames, 0);
  const size_t n = libunwind_backtrace(slow, kMaxFrames, 0);
  asm volatile("" ::: "memory");
  g_compared.fetch_add(1, std::memory_order_relaxed);
  if (r.outcome == Outcome::kFallback) {
    g_fallbacks.fetch_add(1, std::memory_order_relaxed);
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
  if (!tls_busy && g_calls.fetch_add(1, std::memory_order_relaxed) % kEvery == 0) {
    tls_busy = true;  // libunwind may allocate; those calls pass straight through
    compare_here();
    tls_busy = false;
  }
  return __libc_malloc(size);
}
