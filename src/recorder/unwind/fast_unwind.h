// The fast unwinder: per frame, one lookup in the rule cache and one or two loads
// from the stack. Cache misses compute the rule from the module's .eh_frame.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::unwind_detail {

// The registers that the rules read, at one instruction of a function.
struct Regs {
  uintptr_t pc = 0, sp = 0, bp = 0;
};

// The registers at this point of the calling function. `pc` is the address just
// after the lea, so it (and pc - 1) lies in the caller at an instruction where `sp`
// and `bp` hold exactly the values read: the CFI row at pc describes them.
// early-clobber outputs: no output may share a register with RBP before it is read.
#define MEMLOUPE_CAPTURE_REGS(regs)                                                  \
  asm volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"              \
               : "=&r"((regs).pc), "=&r"((regs).sp), "=&r"((regs).bp))

enum class Outcome : uint8_t {
  kComplete,   // reached the outermost frame (or an address in no module)
  kTruncated,  // stopped at max_frames
  kFallback,   // met a frame it cannot step through; out[] is incomplete
};

struct FastResult {
  size_t frames = 0;
  Outcome outcome = Outcome::kComplete;
};

// Unwinds from `regs` (taken inside some function F): writes F's return address and
// those of F's callers, innermost first, after skipping `skip` of them. F's own pc is
// never written.
FastResult fast_unwind(const Regs& regs, uint64_t* out, size_t max_frames, size_t skip) noexcept;

// fast_unwind from the caller's frame with no libunwind fallback: out[0] is the
// return address of this call, as for unwind_here. For tests and benchmarks.
FastResult fast_unwind_here(uint64_t* out, size_t max_frames, size_t skip) noexcept;

}  // namespace memloupe::recorder::unwind_detail
