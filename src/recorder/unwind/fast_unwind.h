// The fast unwinder: per frame, one lookup in the rule cache and one or two loads
// from the stack. Cache misses compute the rule from the module's .eh_frame.
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/unwind/regs.h"

namespace memloupe::recorder::unwind_detail {

// The registers that the rules read, at one instruction of a function (taken by
// MEMLOUPE_CAPTURE_REGS, unwind.h).
using Regs = UnwindRegs;

enum class Outcome : uint8_t {
  kComplete,   // reached the outermost frame (or an address in no module)
  kTruncated,  // stopped at max_frames
  kFallback,   // met a frame it cannot step through; out[] is incomplete
};

struct FastResult {
  size_t frames = 0;
  Outcome outcome = Outcome::kComplete;
  // What the tail memo knows of the outer frames (unwind.h, UnwindShare): this
  // walk's id if its output is whole for the memo (0 if not), and, after a
  // splice that ended the walk at the stack's outermost frame, the id of the
  // earlier whole walk whose outermost `outer` frames this walk's output ends
  // with.
  uint64_t walk = 0;
  uint64_t previous = 0;
  size_t outer = 0;
};

// Unwinds from `regs` (taken inside some function F): writes F's return address and
// those of F's callers, innermost first, after skipping `skip` of them. F's own pc is
// never written.
FastResult fast_unwind(const Regs& regs, uint64_t* out, size_t max_frames, size_t skip) noexcept;

// fast_unwind from the caller's frame with no libunwind fallback: out[0] is the
// return address of this call, as for unwind_here. For tests and benchmarks.
FastResult fast_unwind_here(uint64_t* out, size_t max_frames, size_t skip) noexcept;

}  // namespace memloupe::recorder::unwind_detail
