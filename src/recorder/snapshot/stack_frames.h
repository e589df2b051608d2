// Splitting a stopped thread's stack into frames, so that each frame is its own
// root named by its function. The unwind rules are the recorder's own
// (unwind/eh_frame.h): a frame runs from its stack pointer up to its CFA.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::snapshot {

struct StackFrame {
  uintptr_t begin = 0, end = 0;  // [stack pointer, CFA)
  uintptr_t pc = 0;              // the frame's pc (exact for the innermost, else a return address)
};

// Walks from (pc, sp, bp) on the stack [stack_begin, stack_end): writes up to
// `cap` frames innermost first and returns how many. Where a frame cannot be
// stepped (no CFI, a signal frame, the last slot), the rest of the stack up to
// stack_end becomes one last frame with that pc. With `skip_own` (the taker's
// stack), the frames up to the outermost one in the recorder's own code are
// dropped.
//
// Takes dl_iterate_phdr's lock on a rule-cache miss: callers hold it already
// (snapshot.cc), so no stopped thread can.
size_t split_stack(uintptr_t pc, uintptr_t sp, uintptr_t bp, uintptr_t stack_begin,
                   uintptr_t stack_end, bool skip_own, StackFrame* out, size_t cap) noexcept;

}  // namespace memloupe::recorder::snapshot
