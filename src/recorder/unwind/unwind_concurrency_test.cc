// Many threads share the rule cache while another keeps invalidating it.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "recorder/unwind/libunwind_backtrace.h"
#include "recorder/unwind/unwind.h"
#include "support/unwind_test_util.h"

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr size_t kMaxFrames = 64;

struct Unwound {
  uint64_t frames[kMaxFrames];
  FastResult result;
};

__attribute__((noinline)) void unwind_at(Unwound& u, int depth, bool libunwind) {
  if (depth > 0) {
    unwind_at(u, depth - 1, libunwind);
  } else if (libunwind) {
    u.result.frames = libunwind_backtrace(u.frames, kMaxFrames, 0);
  } else {
    u.result = fast_unwind_here(u.frames, kMaxFrames, 0);
  }
  MEMLOUPE_KEEP_FRAME();
}

TEST(UnwindConcurrency, ThreadsAgreeWithLibunwindWhileCacheIsCleared) {
  std::atomic<bool> stop{false};
  std::atomic<int> mismatches{0}, fallbacks{0};
  std::thread invalidator([&] {
    while (!stop.load()) {
      unwind_modules_changed();
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < 4; ++t) {
    workers.emplace_back([&, t] {
      // Frames 1..depth are unwind_at's recursive call sites, the same in every
      // unwind. Frame 0 (which unwinder) and frame depth+1 (the loop's call site,
      // which the compiler may duplicate) can differ; every frame above must not.
      const int depth = 10 + t;
      auto same_stack = [depth](const Unwound& a, const Unwound& b) {
        if (a.result.frames != b.result.frames || a.result.frames <= size_t(depth) + 1) {
          return false;
        }
        return std::equal(a.frames + 1, a.frames + depth + 1, b.frames + 1) &&
               std::equal(a.frames + depth + 2, a.frames + a.result.frames, b.frames + depth + 2);
      };
      Unwound reference, u;
      unwind_at(reference, depth, true);
      for (int i = 0; i < 2000; ++i) {
        unwind_at(u, depth, false);
        fallbacks += u.result.outcome == Outcome::kFallback;
        mismatches += !same_stack(reference, u);
      }
    });
  }
  for (std::thread& w : workers) w.join();
  stop = true;
  invalidator.join();
  EXPECT_EQ(fallbacks.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
