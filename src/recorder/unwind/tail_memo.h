// The last walk's frames, per thread, so that the next walk can reuse its outer part.
//
// Consecutive allocations in a thread usually share most of their stack: only the
// innermost few frames differ. A walk is a deterministic function of a frame's state
// (sp, pc, bp), the rules (fixed while no module changes) and the stack words it
// reads. So when a new walk reaches a frame whose state equals a remembered one, the
// remembered frames above it are exactly what walking would produce, provided every
// stack word the old walk read above it (each return-address slot, each saved-RBP
// slot) still holds the value it had. Checking that is one independent load and
// compare per frame instead of a dependent cache lookup, decode and load.
//
//   memo (innermost first)               new walk
//   [0] sp0 pc0 bp0   (older inner)        frame a (new)      -> recorded as new[0]
//   [1] sp1 pc1 bp1   (older inner)        frame b: == memo[2] -> splice:
//   [2] sp2 pc2 bp2   <- r                   verify slot(sp3 - 8) == pc3, slot(sp4 - 8)
//   [3] sp3 pc3 bp3                           == pc4 ..., write pc2, pc3, pc4 and stop
//   [4] sp4 pc4 bp4   (outermost: stops)      (or walk on from the last valid frame)
//   next memo = new[0..1) + memo[2..5)
//
// Per thread, double-buffered (the new walk's frames go to the other buffer while
// the old one is read), and never touched by a walk nested in a signal handler that
// interrupted another walk on the same thread (the busy flag).
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/unwind/module_lookup.h"

namespace memloupe::recorder::unwind_detail {

struct FrameState {
  uintptr_t sp = 0, pc = 0, bp = 0;
  friend bool operator==(const FrameState&, const FrameState&) = default;
};

class MemoSession {
 public:
  // Takes this thread's memo if no other walk holds it; it is searched only if it
  // was recorded for the same modules and inside `stack`. An inactive session
  // (nested walk, or memo disabled) makes every call below a no-op.
  explicit MemoSession(Span stack) noexcept;
  ~MemoSession();
  MemoSession(const MemoSession&) = delete;
  MemoSession& operator=(const MemoSession&) = delete;

  // Before a splice: records an emitted frame of the new walk (innermost first).
  void record(const FrameState& f) noexcept;
  // How the last recorded frame was stepped: its saved-RBP slot (0: none).
  void set_last_rbp_slot(uint8_t slot) noexcept;
  // Stops searching and recording (after a signal frame, or after a splice).
  void stop() noexcept { searching_ = recording_ = false; }

  // The memo index whose state equals `f`, or -1. Calls come with increasing sp.
  int find(const FrameState& f) noexcept;
  // Verifies the remembered frames outward from index r, at most up to `last`;
  // returns the outermost index whose frame is still what a walk would produce.
  size_t verify(size_t r, size_t last) const noexcept;
  size_t count() const noexcept;
  uintptr_t pc_at(size_t i) const noexcept;
  FrameState state_at(size_t i) const noexcept;
  bool outermost_stops() const noexcept;  // the last frame was the end of the stack

  // Ends a splice at `r` whose verification reached `k`: if it reached `last` (no
  // mismatch), the memo becomes the recorded frames followed by memo[r..]; after a
  // mismatch the memo is dropped (the next walk records afresh).
  void commit_splice(size_t r, size_t k, size_t last) noexcept;
  // Ends a walk that met no remembered frame: the recorded frames become the memo.
  // `stops` says the last recorded frame ended the stack. No-op after a splice.
  void commit_fresh(bool stops) noexcept;

 private:
  bool active_ = false;
  bool searching_ = false;
  bool recording_ = false;
  bool spliced_ = false;
  size_t cursor_ = 0;  // find(): memo index of the innermost frame not yet passed
  size_t recorded_ = 0;
  Span stack_;
};

// Bumped by unwind_modules_changed(): memos from before are not used again.
void bump_memo_generation() noexcept;

// On by default. Off makes every walk step every frame through the rule cache (for
// benchmarks that measure that path, and tests that compare both).
void set_tail_memo_enabled(bool enabled) noexcept;

// Splices made by this thread's walks so far: `full` found the remembered tail
// valid, `partial` found a remembered frame whose outer frames had changed.
struct MemoStats {
  uint64_t full = 0, partial = 0;
};
MemoStats memo_stats() noexcept;

}  // namespace memloupe::recorder::unwind_detail
