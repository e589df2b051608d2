// What a walk tells of the outer frames it shares with an earlier walk of its
// thread (docs/UNWINDING.md, UnwindShare): its own header, so that the unwinder's
// units and the staging ring take it without including each other.
#pragma once

#include <cstdint>

namespace memloupe::recorder {

// Says what the thread's tail memo knows of the outer frames
// (docs/UNWINDING.md): consecutive deep backtraces of a thread share most of
// their outer frames, and a walk that spliced the memo's frames up to the
// stack's end knows how many without comparing them.
struct UnwindShare {
  // This walk's id, unique in the process, if its output ends at the stack's
  // outermost frame in a way a later walk can name (else 0).
  uint64_t walk = 0;
  // If not 0: the id of an earlier walk (of this thread) whose output's
  // outermost `outer` frames are this output's outermost `outer` frames (both
  // outputs end at the stack's outermost frame). `outer` means nothing if 0.
  uint64_t previous = 0;
  uint64_t outer = 0;
};

}  // namespace memloupe::recorder
