// The fast unwinder: per frame, one lookup in the rule cache and one or two loads
// from the stack. Cache misses compute the rule from the module's .eh_frame.
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/unwind/regs.h"
#include "recorder/unwind/unwind_share.h"

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
};

// Unwinds from `regs` (taken inside some function F): writes F's return address and
// those of F's callers, innermost first, after skipping `skip` of them. F's own pc is
// never written. With `share`, a complete walk that knows something of its outer
// frames from the tail memo (UnwindShare) writes it there; otherwise *share is
// left as it was (the caller clears it: the hot path of shallow walks then never
// touches it).
FastResult fast_unwind(const Regs& regs, uint64_t* out, size_t max_frames, size_t skip,
                       UnwindShare* share = nullptr) noexcept;

// fast_unwind from the caller's frame with no libunwind fallback: out[0] is the
// return address of this call, as for unwind_here. For tests and benchmarks.
FastResult fast_unwind_here(uint64_t* out, size_t max_frames, size_t skip) noexcept;

}  // namespace memloupe::recorder::unwind_detail
