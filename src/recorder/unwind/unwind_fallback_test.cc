// The libunwind fallback: a frame whose CFA the fast unwinder's rules cannot
// express (here: based on rbx) hands the walk to libunwind, and unwind_from must
// still start exactly at the caller it was given, whichever of libunwind's first
// frames that is.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "recorder/unwind/unwind.h"
#include "recorder/unwind/unwind_stats.h"
#include "support/unwind_test_util.h"

// call_through_rbx_frame(fn, arg): calls fn(arg) from a frame whose CFA is
// rbx + 16 (DW_CFA_def_cfa_register rbx), which the fast unwinder's rules (CFA
// from rsp or rbp) cannot describe: stepping through it needs libunwind.
extern "C" void call_through_rbx_frame(void (*fn)(void*), void* arg);
asm(R"(
  .text
  .p2align 4
  .globl call_through_rbx_frame
  .type call_through_rbx_frame, @function
call_through_rbx_frame:
  .cfi_startproc
  pushq %rbx
  .cfi_adjust_cfa_offset 8
  .cfi_offset %rbx, -16
  movq %rsp, %rbx
  .cfi_def_cfa_register %rbx
  movq %rdi, %rax
  movq %rsi, %rdi
  call *%rax
  movq %rbx, %rsp
  .cfi_def_cfa_register %rsp
  popq %rbx
  .cfi_adjust_cfa_offset -8
  ret
  .cfi_endproc
  .size call_through_rbx_frame, .-call_through_rbx_frame
)");

namespace memloupe::recorder {
namespace {

using unwind_detail::fallback_count;

struct FallbackProbe {
  size_t max_frames = 256;
  std::vector<uint64_t> from, here;
  std::vector<uint64_t> chain;  // return addresses recorded by the frames themselves
};

__attribute__((noinline)) void unwind_deeper(const UnwindRegs& start, FallbackProbe& p, int depth) {
  if (depth > 0) {
    unwind_deeper(start, p, depth - 1);
  } else {
    p.from.resize(p.max_frames);
    p.from.resize(unwind_from(start, p.from.data(), p.max_frames));
  }
  MEMLOUPE_KEEP_FRAME();
}

// Runs inside call_through_rbx_frame: the walk from here must cross it.
__attribute__((noinline)) void start_below_rbx_frame(void* arg) {
  FallbackProbe& p = *static_cast<FallbackProbe*>(arg);
  UnwindRegs start;
  MEMLOUPE_CAPTURE_REGS(start);
  unwind_deeper(start, p, 3);  // unwind_from is called a few frames further in
  p.here.resize(p.max_frames + 1);
  p.here.resize(unwind_here(p.here.data(), p.max_frames + 1, 0));
  MEMLOUPE_RECORD_RA(p.chain);  // into call_through_rbx_frame
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void enter_rbx_frame(FallbackProbe& p) {
  call_through_rbx_frame(start_below_rbx_frame, &p);
  MEMLOUPE_RECORD_RA(p.chain);  // into the test body
  MEMLOUPE_KEEP_FRAME();
}

TEST(UnwindFallback, FromRegistersCrossesAFrameOnlyLibunwindCanStep) {
  for (const size_t max_frames : {size_t{256}, size_t{3}}) {
    FallbackProbe p;
    p.max_frames = max_frames;
    const uint64_t fallbacks_before = fallback_count();
    enter_rbx_frame(p);
    EXPECT_GT(fallback_count(), fallbacks_before) << "the rbx-based frame did not need libunwind";
    // The walk starts at start_below_rbx_frame's return address into
    // call_through_rbx_frame (chain[0]); then comes call_through_rbx_frame's own
    // return address, into enter_rbx_frame, which only libunwind could step to;
    // then enter_rbx_frame's, into the test body (chain[1]).
    ASSERT_EQ(p.chain.size(), 2u);
    ASSERT_GE(p.from.size(), 3u) << max_frames;
    EXPECT_EQ(p.from[0], p.chain[0]) << max_frames;
    EXPECT_EQ(p.from[2], p.chain[1]) << max_frames;
    EXPECT_LE(p.from.size(), max_frames);
    // unwind_here, started one frame further in (inside start_below_rbx_frame),
    // finds the same frames after its first.
    ASSERT_FALSE(p.here.empty());
    const std::vector<uint64_t> expected(p.here.begin() + 1, p.here.end());
    if (max_frames == 256) {
      EXPECT_EQ(p.from, expected);
    }
  }
}

}  // namespace
}  // namespace memloupe::recorder
