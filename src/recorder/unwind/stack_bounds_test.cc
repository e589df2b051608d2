// Where the unwinder may read: the stack spans it establishes per thread.
#include "recorder/unwind/stack_bounds.h"

#include <pthread.h>
#include <sys/mman.h>
#include <ucontext.h>

#include <gtest/gtest.h>

#include "support/unwind_test_util.h"

namespace memloupe::recorder::unwind_detail {
namespace {

// The current stack pointer.
uintptr_t here() {
  uintptr_t sp;
  asm volatile("movq %%rsp, %0" : "=r"(sp));
  return sp;
}

TEST(StackBounds, PagesReadable) {
  constexpr size_t kPage = 4096;
  void* mem = mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  const auto base = reinterpret_cast<uintptr_t>(mem);
  EXPECT_TRUE(pages_readable(base, base + 3 * kPage));
  ASSERT_EQ(mprotect(reinterpret_cast<void*>(base + kPage), kPage, PROT_NONE), 0);  // a guard
  EXPECT_FALSE(pages_readable(base, base + 3 * kPage));
  EXPECT_TRUE(pages_readable(base + 2 * kPage, base + 3 * kPage));
  ASSERT_EQ(munmap(reinterpret_cast<void*>(base + 2 * kPage), kPage), 0);  // a hole
  EXPECT_FALSE(pages_readable(base, base + kPage * 3));
  EXPECT_TRUE(pages_readable(base, base + kPage));
  munmap(mem, 2 * kPage);
}

TEST(StackBounds, MainThreadSpanReachesTheInitialStack) {
  const uintptr_t sp = here();
  const Span s = stack_span(sp);
  EXPECT_TRUE(s.contains(sp));
  EXPECT_GT(s.end, reinterpret_cast<uintptr_t>(__builtin_frame_address(0)));
  EXPECT_TRUE(pages_readable(s.begin, s.end));
}

void* thread_span(void* out) {
  const uintptr_t sp = here();
  *static_cast<Span*>(out) = stack_span(sp);
  EXPECT_TRUE(static_cast<Span*>(out)->contains(sp));
  // A glibc thread's stack ends at its descriptor.
  EXPECT_EQ(static_cast<Span*>(out)->end, reinterpret_cast<uintptr_t>(pthread_self()));
  return nullptr;
}

TEST(StackBounds, ThreadSpanEndsAtItsDescriptor) {
  Span s;
  pthread_t t;
  ASSERT_EQ(pthread_create(&t, nullptr, thread_span, &s), 0);
  ASSERT_EQ(pthread_join(t, nullptr), 0);
  EXPECT_NE(s.end, 0u);
}

// A fiber (makecontext) on a stack glibc knows nothing about: the span must still
// cover only readable memory, and unwinding there must agree with libunwind.
ucontext_t g_main_ctx, g_fiber_ctx;
Stacks g_fiber_stacks;
Span g_fiber_span;

void fiber_body() {
  const uintptr_t sp = here();
  g_fiber_span = stack_span(sp);
  g_fiber_stacks = capture_stacks(128);
}

TEST(StackBounds, FiberOnItsOwnStack) {
  constexpr size_t kSize = 128 * 1024;
  void* mem = mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  ASSERT_EQ(getcontext(&g_fiber_ctx), 0);
  g_fiber_ctx.uc_stack.ss_sp = mem;
  g_fiber_ctx.uc_stack.ss_size = kSize;
  g_fiber_ctx.uc_link = &g_main_ctx;
  makecontext(&g_fiber_ctx, fiber_body, 0);
  ASSERT_EQ(swapcontext(&g_main_ctx, &g_fiber_ctx), 0);
  munmap(mem, kSize);
  // The span covers the fiber's stack up to its top (if it could be established).
  if (g_fiber_span.end != 0) {
    EXPECT_TRUE(g_fiber_span.contains(reinterpret_cast<uintptr_t>(mem) + kSize - 8));
  }
  EXPECT_NE(g_fiber_stacks.outcome, Outcome::kFallback);
  EXPECT_EQ(g_fiber_stacks.fast, g_fiber_stacks.libunwind);
  EXPECT_EQ(g_fiber_stacks.api, g_fiber_stacks.fast);
  EXPECT_GE(g_fiber_stacks.fast.size(), 2u);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
