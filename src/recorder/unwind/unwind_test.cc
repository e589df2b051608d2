// The fast unwinder against libunwind and against return addresses the frames record
// themselves, on stacks of known shape.
#include <alloca.h>
#include <pthread.h>
#include <sys/mman.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "recorder/unwind/eh_frame.h"
#include "recorder/unwind/unwind.h"
#include "support/unwind_test_util.h"

namespace memloupe::recorder::unwind_detail {
namespace {

struct Probe {
  std::vector<uint64_t> chain;  // recorded return addresses, innermost first
  Stacks stacks;
  size_t max_frames = 512;
  size_t skip = 0;
};

__attribute__((noinline)) void recurse(Probe& p, int depth) {
  if (depth == 0) {
    p.stacks = capture_stacks(p.max_frames, p.skip);
  } else {
    recurse(p, depth - 1);
  }
  MEMLOUPE_RECORD_RA(p.chain);
  MEMLOUPE_KEEP_FRAME();
}

// The fast unwinder walked the whole stack itself and agrees with libunwind.
void expect_fast_matches_libunwind(const Stacks& s) {
  EXPECT_EQ(s.outcome, Outcome::kComplete);
  EXPECT_EQ(s.fast, s.libunwind);
  EXPECT_EQ(s.api, s.fast);
}

TEST(Unwind, DeepRecursionMatchesRecordedChainAndLibunwind) {
  Probe p;
  recurse(p, 200);
  ASSERT_EQ(p.chain.size(), 201u);
  expect_fast_matches_libunwind(p.stacks);
  // fast[0] lies in recurse(0) (capture_stacks' return address); then the chain.
  ASSERT_GT(p.stacks.fast.size(), p.chain.size() + 1);
  for (size_t i = 0; i < p.chain.size(); ++i) EXPECT_EQ(p.stacks.fast[i + 1], p.chain[i]) << i;
}

TEST(Unwind, TruncatesAtMaxFrames) {
  Probe p;
  p.max_frames = 7;
  recurse(p, 50);
  EXPECT_EQ(p.stacks.outcome, Outcome::kTruncated);
  ASSERT_EQ(p.stacks.fast.size(), 7u);
  EXPECT_EQ(p.stacks.fast, p.stacks.libunwind);
  EXPECT_EQ(p.stacks.api, p.stacks.fast);
  for (size_t i = 1; i < 7; ++i) EXPECT_EQ(p.stacks.fast[i], p.chain[i - 1]);
}

__attribute__((noinline)) void recurse_twice(Stacks& full, Stacks& skipped, int depth) {
  if (depth == 0) {
    full = capture_stacks(512, 0);
    skipped = capture_stacks(512, 5);
  } else {
    recurse_twice(full, skipped, depth - 1);
  }
  MEMLOUPE_KEEP_FRAME();
}

TEST(Unwind, SkipDropsInnermostFrames) {
  Stacks full, skipped;
  recurse_twice(full, skipped, 20);
  expect_fast_matches_libunwind(skipped);
  // Above the two capture call sites (index 0) the stacks are the same.
  ASSERT_EQ(skipped.fast.size() + 5, full.fast.size());
  for (size_t i = 0; i < skipped.fast.size(); ++i) {
    EXPECT_EQ(skipped.fast[i], full.fast[i + 5]) << i;
  }
}

// unwind_from: registers taken in `start_here`, unwound from two frames further
// in (as the recorder unwinds from its hook entry inside its slow path).
struct FromProbe {
  std::vector<uint64_t> from, here;  // unwind_from(start); unwind_here in start_here
  std::vector<uint64_t> chain;       // start_here's and its callers' return addresses
  size_t max_frames = 512;
};

__attribute__((noinline)) void unwind_further_in(const UnwindRegs& start, FromProbe& p, int depth) {
  if (depth > 0) {
    unwind_further_in(start, p, depth - 1);
  } else {
    p.from.resize(p.max_frames);
    p.from.resize(unwind_from(start, p.from.data(), p.max_frames));
  }
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void start_here(FromProbe& p) {
  UnwindRegs start;
  MEMLOUPE_CAPTURE_REGS(start);
  unwind_further_in(start, p, 2);
  p.here.resize(p.max_frames + 1);
  p.here.resize(unwind_here(p.here.data(), p.max_frames + 1, 0));
  MEMLOUPE_RECORD_RA(p.chain);
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void call_start_here(FromProbe& p, int depth) {
  if (depth > 0) {
    call_start_here(p, depth - 1);
  } else {
    start_here(p);
  }
  MEMLOUPE_RECORD_RA(p.chain);
  MEMLOUPE_KEEP_FRAME();
}

TEST(Unwind, FromRegistersStartsAtTheirFunctionsReturnAddress) {
  for (const int depth : {0, 3, 20}) {
    for (const size_t max_frames : {size_t{512}, size_t{4}}) {
      FromProbe p;
      p.max_frames = max_frames;
      call_start_here(p, depth);
      // unwind_here's out[0] lies in start_here; from there on both are the same.
      ASSERT_FALSE(p.here.empty());
      const std::vector<uint64_t> expected(p.here.begin() + 1, p.here.end());
      EXPECT_EQ(p.from, expected) << depth << " " << max_frames;
      ASSERT_FALSE(p.from.empty());
      const size_t n = std::min(p.chain.size(), p.from.size());
      EXPECT_TRUE(std::equal(p.chain.begin(), p.chain.begin() + static_cast<long>(n), p.from.begin()));
    }
  }
}

// unwind_from's UnwindShare: a thread's walks at changing depths under one
// outer stack splice the tail memo up to the stack's end, and each that does
// names an earlier walk of its thread whose output ends with the same
// `outer` frames (what the staging ring then need not compare).
struct ShareProbe {
  std::vector<std::vector<uint64_t>> outs;
  std::vector<UnwindShare> shares;
};

__attribute__((noinline)) void unwind_sharing(ShareProbe& p, int depth) {
  if (depth > 0) {
    unwind_sharing(p, depth - 1);
  } else {
    UnwindRegs start;
    MEMLOUPE_CAPTURE_REGS(start);
    std::vector<uint64_t> out(512);
    UnwindShare share;
    share.previous = 12345;  // overwritten
    out.resize(unwind_from(start, out.data(), out.size(), &share));
    p.outs.push_back(std::move(out));
    p.shares.push_back(share);
  }
  MEMLOUPE_KEEP_FRAME();
}

TEST(Unwind, FromRegistersNamesTheEarlierWalkWithTheSameOuterFrames) {
  ShareProbe p;
  for (int i = 0; i < 200; ++i) unwind_sharing(p, 20 + i * 7 % 41);
  size_t named = 0;
  for (size_t k = 0; k < p.shares.size(); ++k) {
    const UnwindShare& s = p.shares[k];
    for (size_t j = 0; j < k && s.walk != 0; ++j) EXPECT_NE(p.shares[j].walk, s.walk) << "ids are unique";
    if (s.previous == 0) continue;  // `outer` means nothing then
    size_t j = k;
    while (j-- > 0 && p.shares[j].walk != s.previous) {
    }
    ASSERT_LT(j, k) << "walk " << k << " names no earlier walk";
    const std::vector<uint64_t>& a = p.outs[k];
    const std::vector<uint64_t>& b = p.outs[j];
    ASSERT_LE(s.outer, std::min(a.size(), b.size()));
    EXPECT_TRUE(std::equal(a.end() - static_cast<long>(s.outer), a.end(), b.end() - static_cast<long>(s.outer)));
    // The memo's splice point lies under the changing recursion: most of the stack.
    if (s.outer > 10) ++named;
  }
  EXPECT_GT(named, 150u);
}

TEST(Unwind, SkipAndTruncateTogether) {
  Probe p;
  p.skip = 3;
  p.max_frames = 4;
  recurse(p, 30);
  EXPECT_EQ(p.stacks.outcome, Outcome::kTruncated);
  ASSERT_EQ(p.stacks.fast.size(), 4u);
  // fast[0] is recurse(0)'s call site; with 3 skipped, fast[0] is chain[2].
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(p.stacks.fast[i], p.chain[i + 2]) << i;
  EXPECT_EQ(p.stacks.api, p.stacks.fast);
}

TEST(Unwind, ZeroMaxFramesWritesNothing) {
  uint64_t out[1] = {42};
  EXPECT_EQ(unwind_here(out, 0, 0), 0u);
  EXPECT_EQ(out[0], 42u);
}

// --- inlined frames and tail calls ----------------------------------------------

__attribute__((always_inline)) inline void inlined_level(Probe& p) {
  p.stacks = capture_stacks(p.max_frames);
}

__attribute__((noinline)) void calls_inlined(Probe& p) {
  inlined_level(p);  // no frame of its own: the next address is our return address
  MEMLOUPE_RECORD_RA(p.chain);
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void tail_callee(Probe& p) {
  p.stacks = capture_stacks(p.max_frames);
  MEMLOUPE_RECORD_RA(p.chain);
  MEMLOUPE_KEEP_FRAME();
}

// Calls tail_callee in tail position: at -O2 its frame is replaced by the callee's.
__attribute__((noinline)) void tail_caller(Probe& p, std::vector<uint64_t>& own) {
  MEMLOUPE_RECORD_RA(own);
  tail_callee(p);
}

TEST(Unwind, InlinedFramesHaveNoAddressOfTheirOwn) {
  Probe p;
  calls_inlined(p);
  expect_fast_matches_libunwind(p.stacks);
  ASSERT_GE(p.stacks.fast.size(), 2u);
  EXPECT_EQ(p.stacks.fast[1], p.chain[0]);
}

TEST(Unwind, TailCalledFrameReplacesItsCaller) {
  Probe p;
  std::vector<uint64_t> caller_ra;
  tail_caller(p, caller_ra);
  expect_fast_matches_libunwind(p.stacks);
  ASSERT_GE(p.stacks.fast.size(), 2u);
  EXPECT_EQ(p.stacks.fast[1], p.chain[0]);
#ifdef __OPTIMIZE__
  // The callee returns straight to tail_caller's caller.
  EXPECT_EQ(p.chain[0], caller_ra[0]);
#endif
}

// --- variable-size frames --------------------------------------------------------

__attribute__((noinline)) void with_alloca(Probe& p, size_t bytes) {
  auto* buf = static_cast<volatile char*>(alloca(bytes));
  buf[0] = 1;
  buf[bytes - 1] = 2;
  p.stacks = capture_stacks(p.max_frames);
  MEMLOUPE_RECORD_RA(p.chain);
  MEMLOUPE_KEEP_FRAME();
}

TEST(Unwind, AllocaFrameUsesRbpBasedCfa) {
  for (const size_t bytes : {16u, 1000u, 70000u}) {
    Probe p;
    with_alloca(p, bytes);
    expect_fast_matches_libunwind(p.stacks);
    ASSERT_GE(p.stacks.fast.size(), 2u);
    EXPECT_EQ(p.stacks.fast[1], p.chain[0]);
    // The frame really was one the fast path steps through with RBP.
    const Rule r = compute_rule(p.stacks.fast[0] - 1);
    EXPECT_EQ(r.kind, RuleKind::kFrame);
    EXPECT_EQ(r.base, CfaBase::kRbp);
  }
}

// --- frames in libc (no frame pointers) ------------------------------------------

thread_local Probe* tls_qsort_probe = nullptr;

int compare_and_capture(const void* a, const void* b) {
  if (tls_qsort_probe != nullptr && tls_qsort_probe->stacks.fast.empty()) {
    tls_qsort_probe->stacks = capture_stacks(tls_qsort_probe->max_frames);
  }
  const int x = *static_cast<const int*>(a), y = *static_cast<const int*>(b);
  return (x > y) - (x < y);
}

TEST(Unwind, ThroughLibcCallback) {
  std::vector<int> v(1000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>((i * 7919) % 1000);
  Probe p;
  tls_qsort_probe = &p;
  qsort(v.data(), v.size(), sizeof(int), compare_and_capture);
  tls_qsort_probe = nullptr;
  expect_fast_matches_libunwind(p.stacks);
  EXPECT_GT(p.stacks.fast.size(), 5u);
}

// --- exceptions ------------------------------------------------------------------

struct CaptureInDestructor {
  Probe& p;
  ~CaptureInDestructor() {
    EXPECT_GT(std::uncaught_exceptions(), 0);
    p.stacks = capture_stacks(p.max_frames);
  }
};

__attribute__((noinline)) void throws_through(Probe& p, int depth) {
  if (depth == 0) {
    CaptureInDestructor c{p};
    throw 42;
  }
  throws_through(p, depth - 1);
  MEMLOUPE_KEEP_FRAME();
}

TEST(Unwind, FromDestructorWhileExceptionInFlight) {
  Probe p;
  try {
    throws_through(p, 10);
    FAIL() << "no exception";
  } catch (int v) {
    EXPECT_EQ(v, 42);
  }
  expect_fast_matches_libunwind(p.stacks);
  EXPECT_GT(p.stacks.fast.size(), 11u);
}

TEST(Unwind, InsideCatchBlock) {
  Probe p;
  try {
    throw 1;
  } catch (int) {
    recurse(p, 5);
  }
  expect_fast_matches_libunwind(p.stacks);
  EXPECT_GE(find_chain(p.stacks.fast, p.chain), 1);
}

// --- threads ---------------------------------------------------------------------

void* thread_body(void* arg) {
  recurse(*static_cast<Probe*>(arg), 20);
  return nullptr;
}

void run_thread(pthread_attr_t* attr, Probe& p) {
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, attr, thread_body, &p), 0);
  ASSERT_EQ(pthread_join(t, nullptr), 0);
}

TEST(Unwind, ThreadWithSmallStack) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 64 * 1024), 0);
  Probe p;
  run_thread(&attr, p);
  pthread_attr_destroy(&attr);
  expect_fast_matches_libunwind(p.stacks);
  EXPECT_EQ(find_chain(p.stacks.fast, p.chain), 1);
  // Down to the thread's entry: recurse frames + thread_body + libc's start_thread
  // (and clone3, where the return address is marked undefined).
  EXPECT_LE(p.stacks.fast.size(), p.chain.size() + 5);
}

TEST(Unwind, ThreadOnUserProvidedStack) {
  constexpr size_t kSize = 256 * 1024;
  void* stack = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(stack, MAP_FAILED);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  ASSERT_EQ(pthread_attr_setstack(&attr, stack, kSize), 0);
  Probe p;
  run_thread(&attr, p);
  pthread_attr_destroy(&attr);
  munmap(stack, kSize);
  expect_fast_matches_libunwind(p.stacks);
  EXPECT_EQ(find_chain(p.stacks.fast, p.chain), 1);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
