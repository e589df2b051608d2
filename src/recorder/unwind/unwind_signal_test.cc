// Unwinding from inside signal handlers: through the kernel's signal frame, from an
// alternate signal stack, and while the interrupted code was itself unwinding.
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "recorder/unwind/eh_frame.h"
#include "recorder/unwind/libunwind_backtrace.h"
#include "recorder/unwind/rule_cache.h"
#include "support/unwind_test_util.h"

namespace memloupe::recorder::unwind_detail {
namespace {

Stacks* g_handler_stacks = nullptr;
uintptr_t g_handler_local = 0;  // an address on the stack the handler ran on

void capturing_handler(int) {
  int local = 0;
  g_handler_local = reinterpret_cast<uintptr_t>(&local);
  *g_handler_stacks = capture_stacks(256);
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void raise_from_chain(std::vector<uint64_t>& chain, int depth) {
  if (depth == 0) {
    pthread_kill(pthread_self(), SIGUSR1);
  } else {
    raise_from_chain(chain, depth - 1);
  }
  MEMLOUPE_RECORD_RA(chain);
  MEMLOUPE_KEEP_FRAME();
}

class ScopedHandler {
 public:
  ScopedHandler(int sig, void (*handler)(int), int flags) : sig_(sig) {
    struct sigaction sa = {};
    sa.sa_handler = handler;
    sa.sa_flags = flags;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, &old_);
  }
  ~ScopedHandler() { sigaction(sig_, &old_, nullptr); }
  ScopedHandler(const ScopedHandler&) = delete;
  ScopedHandler& operator=(const ScopedHandler&) = delete;

 private:
  int sig_;
  struct sigaction old_;
};

// The stacks cross exactly one signal frame and then contain the recorded chain.
void expect_through_signal_frame(const Stacks& s, const std::vector<uint64_t>& chain) {
  EXPECT_EQ(s.outcome, Outcome::kComplete);
  EXPECT_EQ(s.fast, s.libunwind);
  EXPECT_EQ(s.api, s.fast);
  int trampolines = 0;
  for (const uint64_t pc : s.fast) trampolines += compute_rule(pc - 1).kind == RuleKind::kSignal;
  EXPECT_EQ(trampolines, 1);
  EXPECT_GT(find_chain(s.fast, chain), 1);
}

TEST(UnwindSignal, ThroughSignalFrame) {
  Stacks s;
  g_handler_stacks = &s;
  std::vector<uint64_t> chain;
  {
    ScopedHandler h(SIGUSR1, capturing_handler, 0);
    raise_from_chain(chain, 8);
  }
  expect_through_signal_frame(s, chain);
}

TEST(UnwindSignal, FromAlternateSignalStack) {
  constexpr size_t kSize = 64 * 1024;
  void* mem = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  stack_t ss = {}, old_ss = {};
  ss.ss_sp = mem;
  ss.ss_size = kSize;
  ASSERT_EQ(sigaltstack(&ss, &old_ss), 0);
  Stacks s;
  g_handler_stacks = &s;
  std::vector<uint64_t> chain;
  {
    ScopedHandler h(SIGUSR1, capturing_handler, SA_ONSTACK);
    raise_from_chain(chain, 8);
  }
  sigaltstack(&old_ss, nullptr);
  munmap(mem, kSize);
  const auto base = reinterpret_cast<uintptr_t>(mem);
  EXPECT_TRUE(g_handler_local >= base && g_handler_local < base + kSize);
  expect_through_signal_frame(s, chain);
}

// A handler that unwinds, interrupting a thread that unwinds (and recomputes rules
// after cache clears) in a loop. The handler compares the fast unwinder with
// libunwind on whatever stack it interrupted.
constexpr size_t kMaxFrames = 128;
std::atomic<int> g_handler_runs{0};
std::atomic<int> g_handler_fallbacks{0};
std::atomic<int> g_handler_mismatches{0};

void comparing_handler(int) {
  uint64_t fast[kMaxFrames], slow[kMaxFrames];
  const FastResult r = fast_unwind_here(fast, kMaxFrames, 0);
  const size_t n = libunwind_backtrace(slow, kMaxFrames, 0);
  g_handler_runs.fetch_add(1);
  // The signal may land on an instruction whose rule the fast path cannot hold (a
  // PLT stub's CFA is a DWARF expression); then unwind_here would use libunwind.
  if (r.outcome == Outcome::kFallback) {
    g_handler_fallbacks.fetch_add(1);
    return;
  }
  // fast[0] and slow[0] are the two call sites in this handler.
  bool same = r.frames == n;
  for (size_t i = 1; same && i < n; ++i) same = fast[i] == slow[i];
  if (!same) g_handler_mismatches.fetch_add(1);
}

__attribute__((noinline)) FastResult unwind_at_depth(uint64_t* out, int depth) {
  FastResult r =
      depth == 0 ? fast_unwind_here(out, kMaxFrames, 0) : unwind_at_depth(out, depth - 1);
  MEMLOUPE_KEEP_FRAME();
  return r;
}

TEST(UnwindSignal, HandlerInterruptsUnwinding) {
  ScopedHandler h(SIGUSR2, comparing_handler, SA_RESTART);
  g_handler_runs = 0;
  g_handler_fallbacks = 0;
  g_handler_mismatches = 0;
  const pthread_t target = pthread_self();
  std::atomic<bool> stop{false};
  std::thread sender([&] {
    while (!stop.load()) {
      pthread_kill(target, SIGUSR2);
      std::this_thread::yield();
    }
  });
  // Frames 1..30 are unwind_at_depth's recursive call sites; frame 31 is the loop's
  // call site, which the compiler may duplicate, so it is not compared.
  constexpr int kDepth = 30;
  uint64_t first[kMaxFrames], again[kMaxFrames];
  const FastResult expected = unwind_at_depth(first, kDepth);
  EXPECT_GT(expected.frames, size_t{kDepth} + 1);
  int mismatches = 0;
  const bool deep_enough = expected.frames > kDepth + 1;
  // Until the handler has run often enough (the sender may be slow to get a CPU), or
  // a few seconds have passed.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  for (int i = 0; deep_enough && (i < 200 || g_handler_runs.load() < 50) &&
                  std::chrono::steady_clock::now() < deadline;
       ++i) {
    // Every 10th round clears the rules, sending the unwinder down its slow path
    // too. That path calls dl_iterate_phdr, and so does the handler (both
    // unwinders' module lookups): glibc's loader lock is recursive but not
    // async-signal-safe, so a signal landing between its lock word and its owner
    // field leaves the handler waiting on its own thread for ever (seen once in
    // hundreds of runs under load). Those rounds run with the signal blocked; the
    // handler still interrupts the other nine, and recomputes its own frames'
    // rules in it after each clear.
    const bool slow_round = i % 10 == 0;
    sigset_t blocked, old_mask;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR2);
    if (slow_round) {
      pthread_sigmask(SIG_BLOCK, &blocked, &old_mask);
      rule_cache().clear();
    }
    const FastResult r = unwind_at_depth(again, kDepth);
    if (slow_round) pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    mismatches += r.frames != expected.frames || r.outcome != expected.outcome ||
                  !std::equal(first, first + kDepth + 1, again) ||
                  !std::equal(first + kDepth + 2, first + expected.frames, again + kDepth + 2);
  }
  stop = true;
  sender.join();
  EXPECT_EQ(expected.outcome, Outcome::kComplete);
  EXPECT_EQ(mismatches, 0);
  EXPECT_GT(g_handler_runs.load(), 0);
  EXPECT_EQ(g_handler_mismatches.load(), 0);
  EXPECT_LT(g_handler_fallbacks.load() * 10, g_handler_runs.load());
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
