// The last walk's frames, per thread, so that the next walk can reuse its outer part.
//
// Consecutive allocations in a thread usually share most of their stack: only the
// innermost few frames differ. A walk is a deterministic function of the current
// frame's state (sp, pc, bp), the rules (fixed while no module changes) and the
// stack words it reads. So when a new walk reaches a frame with the sp and pc of a
// remembered one, the remembered frames above it are exactly what walking would
// produce, provided every input of each remembered step is unchanged: the return
// address slot (CFA - 8) still holds the remembered caller pc, and for a step whose
// CFA is RBP-based, RBP (tracked from the actual saved-RBP slots) has the remembered
// value. Checking that is an independent load and compare per frame instead of a
// dependent cache lookup, decode and load.
//
//   memo (outermost first)                new walk
//   [0] sp0 pc0    (outermost: stops)       frame a (new)        -> recorded
//   [1] sp1 pc1                             frame b: sp2 pc2      -> splice at r = 2:
//   [2] sp2 pc2    <- r                       check slot(sp1 - 8) == pc1,
//   [3] sp3 pc3    (older inner frames)        slot(sp0 - 8) == pc0; write pc2, pc1,
//                                              pc0 and stop (or walk on from the last
//   next memo: [0..2] kept, [3] = frame a     frame that checked out)
//
// The memo keeps the innermost kMemoCapacity frames: a splice that would make it
// longer drops its outermost frames (a walk that needs them steps on from the
// outermost one it has). Per thread, one buffer: the memo at the bottom, and above
// it the frames a walk records, from the top down (innermost at the top). A walk
// nested in a signal handler that interrupted another walk on the same thread does
// not touch the memo at all (the busy flag).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "recorder/unwind/module_lookup.h"
#include "recorder/tls_model.h"
#include "recorder/unwind/rule.h"

namespace memloupe::recorder::unwind_detail {

struct FrameState {
  uintptr_t sp = 0, pc = 0, bp = 0;
};

// Frames a walk records before it meets the memo: as many as the recorder walks
// by default (its 128-frame backtrace and up to 8 frames of its own that it
// drops, record.cc), so that the memo holds all of such a walk.
inline constexpr size_t kRecordCapacity = 136;
// Frames remembered per thread: twice that, so that a splice on a stack deeper
// than a walk keeps the outer frames too (dropping them moved the whole memo at
// every splice on bench_stl_deep's deepest stacks, and a later, shallower walk
// had to step them again). The memo and the frames being recorded are 26 bytes
// per frame of static TLS.
inline constexpr size_t kMemoCapacity = 2 * kRecordCapacity;
inline constexpr size_t kMemoSlots = kMemoCapacity + kRecordCapacity;

// A walk neither searches nor records the memo for the first kMemoFromDepth frames
// above the one it starts in (skipped or written), unless the thread's memo holds
// at least kMemoDeepFrames frames (its recent walks were deep: see
// memo_start_depth), and then for the first kMemoDeepFromDepth. Those inner
// frames are the ones that differ between consecutive walks, and on a stack no
// deeper than this the memo's bookkeeping (taking it, recording, committing)
// costs more than stepping the frames it could save. Chosen by time (perf
// samples of the unwinder), not instructions: the hot loop's frames are a chain
// of dependent loads, the memo's checks independent ones. From the 6th frame
// rather than the 8th, sqlite3's 13-20-frame stacks take fewer samples; from
// the 4th or 5th, the 5-7-frame stacks of bench_alloc_mt and bench_maps_mt pay
// the bookkeeping (RECORDER.md, "The memo's depths by samples"). On deep
// stacks the hot loop steps the first two (the allocation's callers, which change from one
// allocation to the next) and the general loop searches from the third:
// searched from the first, they cost the general loop's bookkeeping
// (bench_stl_deep: 4.3% of the recording's instructions; from the 2nd, 3rd,
// 4th or 5th frame: -2.1%, -4.3%, -4.1%, -3.3%). But a site that repeats
// whole splices at the first frame, whose check is cheaper than stepping it:
// where the splices say so, deep walks search from the first frame
// (ThreadMemo::deep_from, MemoSession::found_at).
inline constexpr size_t kMemoFromDepth = 6;
inline constexpr size_t kMemoDeepFrames = 16;
inline constexpr size_t kMemoDeepFromDepth = 2;

// The memo, outermost first: frame i was stepped to frame i - 1: its CFA was sp[i - 1]
// (RBP-based if rbp_based[i], from bp[i]), the return address was read at
// sp[i - 1] - 8 and, if rbp_slot[i] != 0, the caller's RBP at sp[i - 1] - 8 * slot.
// Consecutive entries are always consecutive frames of one walk (the checks rely on
// it). Entries [kMemoCapacity, kMemoSlots) hold the frames a walk is recording. One
// array per field: a splice reads pc[] contiguously (an array of 32-byte entries
// measured slower in wall time on deep stacks despite fewer instructions).
struct MemoFrames {
  uintptr_t sp[kMemoSlots] = {};
  uintptr_t pc[kMemoSlots] = {};
  uintptr_t bp[kMemoSlots] = {};
  uint8_t rbp_slot[kMemoSlots] = {};
  bool rbp_based[kMemoSlots] = {};
  // based_upto[i]: how many of the steps 0..i are RBP-based (for i < count).
  // It depends only on the frames outside i, which a splice keeps, so a
  // commit renumbers only from the first frame it changed; verify() skips its
  // RBP pass when none lies in the checked range (code without frame pointers:
  // that pass was a sixth of the check's samples on bench_stl_deep).
  uint16_t based_upto[kMemoCapacity] = {};
  size_t count = 0;    // <= kMemoCapacity
  bool stops = false;  // frame 0 was the end of its stack
};

struct MemoStats {
  uint64_t full = 0, partial = 0;  // found frames whose checked frames all held / did not
  uint64_t reused = 0;             // frames the full ones handed to their walks
};

struct ThreadMemo {
  MemoFrames m;
  uint32_t generation = 0;
  // Ids of whole walks (MemoSession::mark_whole), unique in the process: taken
  // from a global counter kWalkIdBlock at a time.
  uint64_t next_walk = 0, walk_end = 0;
  // A walk (its id; 0: none) whose output ended at the stack's outermost frame
  // and whose outermost frames are the memo's pc[0], pc[1], ..., pc[count - 1]
  // (outermost first; fewer if its output was shorter). A splice into memo[0]
  // of such a memo tells the staging ring how many outer frames the backtrace
  // shares with that walk's (record.cc). Cleared by every walk that takes the
  // memo that changes its frames, set again by one that ends whole.
  uint64_t whole = 0;
  // Where deep walks search the memo from (memo_start_depth): set by each
  // splice (MemoSession::found_at).
  uint8_t deep_from = kMemoDeepFromDepth;
  uint8_t deep_probe = 0;  // splices at kMemoDeepFromDepth since the last probe from 0
  uint8_t last_from = 0;   // where the last splicing walk searched from
  Span span;  // the stack span the memo's frames were read in
  bool busy = false;
  MemoStats stats;
};

// The result of checking remembered frames from a splice point outwards.
struct Verified {
  size_t last_good;   // index of the outermost frame that is what a walk would give
  uintptr_t bp;       // the actual RBP at that frame
};

class MemoSession {
 public:
  // Inactive until begin(): every call below is a no-op.
  MemoSession() noexcept = default;
  // Takes this thread's memo if no other walk holds it; it is searched only if it
  // was recorded for the same modules and inside `stack`. An inactive session
  // (nested walk, or memo disabled) makes every call below a no-op. At most once.
  void begin(Span stack) noexcept;
  ~MemoSession();
  MemoSession(const MemoSession&) = delete;
  MemoSession& operator=(const MemoSession&) = delete;

  // Before a splice: records an emitted frame of the new walk with the packed rule
  // (rule.h) that steps it (innermost first, at the top of the buffer, going down).
  // Stops after kRecordCapacity frames: those are the innermost ones, the ones a
  // memo keeps.
  void record(uintptr_t sp, uintptr_t pc, uintptr_t bp, uint32_t rule) noexcept {
    // A kSignal rule has no RBP bits: the check of its step (never made, the memo
    // stops at a signal frame) would compare nothing.
    put(sp, pc, bp, static_cast<uint8_t>(rule >> kRbpSlotShift), (rule & kRbpBaseBit) != 0);
  }
  // Records memo frames r, r - 1, ..., good as frames of the new walk (a found
  // frame whose check failed further out: those it checked are the walk's own).
  void record_memo(size_t r, size_t good) noexcept {
    if (!recording_) return;
    const MemoFrames& m = t_->m;
    for (size_t i = r + 1; i-- > good;) put(m.sp[i], m.pc[i], m.bp[i], m.rbp_slot[i], m.rbp_based[i]);
  }
  // Stops searching and recording (after a signal frame, or after a splice that
  // cannot extend the memo).
  void stop() noexcept { searching_ = recording_ = false; }
  // After a splice that reached memo[0] on a stack that goes on (the memo lost
  // its outermost frames to a deeper stack before): the walk steps on from
  // memo[0] (`sp`, `pc`), whose actual RBP is `bp`, and the frames it meets are
  // recorded to become the memo's new outermost ones, as many as fit, so that
  // the next walk need not step them again. Otherwise the same as stop().
  void extend(uintptr_t sp, uintptr_t pc, uintptr_t bp) noexcept;

  // The memo index with this sp and pc, or -1. Calls come with increasing sp.
  int find(uintptr_t sp, uintptr_t pc) noexcept {
    if (!searching_) return -1;
    const MemoFrames& m = t_->m;
    long c = cursor_;  // in a register: the session lives in memory
    while (c >= 0 && m.sp[c] < sp) --c;
    cursor_ = c;
    if (c < 0) {
      searching_ = false;
      return -1;
    }
    return m.sp[c] == sp && m.pc[c] == pc ? static_cast<int>(c) : -1;
  }

  // Checks the remembered steps outward from index r (where the walk's actual RBP is
  // `bp`), at most as far as index `last` (<= r). With `out`, also writes the pcs
  // of frames r, r - 1, ..., last_good there (innermost first), and may write
  // anything up to out[r - last].
  Verified verify(size_t r, uintptr_t bp, size_t last, uint64_t* out = nullptr) const noexcept;
  const MemoFrames& frames() const noexcept { return t_->m; }

  // The walk the memo's frames are whole for (ThreadMemo::whole; 0 if none),
  // until this walk commits.
  uint64_t whole() const noexcept { return t_ != nullptr ? t_->whole : 0; }
  // The walk is returning complete (its last frame the stack's outermost), and
  // its caller wants the id (the mark is only for those: a walk that does not
  // mark itself leaves `whole` cleared if it changed the memo): if
  // its commit left the memo ending there (m.stops) and made of its own frames,
  // it becomes the memo's `whole` walk, under a new id. Returns the id, or 0.
  uint64_t mark_whole() noexcept;

  // The walk, which searched the memo from frame `from` above its start, found
  // it at frame `depth`. A walk that searched from the first frame and found
  // it inside kMemoDeepFromDepth keeps the next deep walk searching from there
  // (a site that repeats whole); one found further out sends it to
  // kMemoDeepFromDepth. From there, a splice at the first frame searched might
  // have come earlier: every kDeepProbe-th such walk, the next two search from
  // the first frame again (the first of them finds a memo without the inner
  // frames, which only it records; probing at each such walk alternated on
  // bench_stl_deep and lost half the gain).
  static constexpr uint8_t kDeepProbe = 16;
  void found_at(size_t depth, size_t from) noexcept {
    if (t_ == nullptr) return;
    ThreadMemo& t = *t_;
    if (from == 0) {
      const bool memo_lacked_them = t.last_from != 0 && depth == kMemoDeepFromDepth;
      t.deep_from = depth < kMemoDeepFromDepth || memo_lacked_them ? 0 : kMemoDeepFromDepth;
    } else if (depth == from && ++t.deep_probe == kDeepProbe) {
      t.deep_probe = 0;
      t.deep_from = 0;
    }
    t.last_from = static_cast<uint8_t>(from < kMemoFromDepth ? from : kMemoFromDepth);
  }

  // Ends a splice at `r` whose check reached `last`: the recorded frames become the
  // memo's frames inside memo[r] (its outermost frames make room if needed).
  void commit_splice(size_t r, size_t last) noexcept;
  // A frame found at `r` whose check failed at `good`: the same sp and pc under
  // another caller (a library function called at the same depth from elsewhere).
  // Frames r..good are the walk's own: they are recorded, and the walk steps on
  // from memo[good], searching on outwards, where the stacks meet again.
  // `bp` is the actual RBP at memo[good], which the walk steps with.
  void reject(size_t r, size_t good, uintptr_t bp) noexcept {
    if (t_ == nullptr) return;
    ++t_->stats.partial;
    record_memo(r, good + 1);
    // Not memo[good]'s remembered RBP: it was not compared unless the step
    // there is RBP-based, and then it differed, while the recorded step is
    // the one this walk takes. A later check passing on the stale value
    // would accept frames stepped from another CFA.
    const MemoFrames& m = t_->m;
    put(m.sp[good], m.pc[good], bp, m.rbp_slot[good], m.rbp_based[good]);
  }
  // Ends a walk that met no remembered frame: the recorded frames become the memo.
  // `stops` says the last recorded frame ended the stack. After a splice, only
  // the frames recorded since extend() are added (outside memo[0]).
  void commit_fresh(bool stops) noexcept;

 private:
  void put(uintptr_t sp, uintptr_t pc, uintptr_t bp, uint8_t rbp_slot, bool rbp_based) noexcept {
    if (!recording_) return;
    if (recorded_ == limit_) {
      recording_ = false;  // keep what was recorded; the rest is walked next time
      return;
    }
    const size_t pos = kMemoSlots - 1 - recorded_;
    MemoFrames& m = t_->m;
    m.sp[pos] = sp;
    m.pc[pos] = pc;
    m.bp[pos] = bp;
    m.rbp_slot[pos] = rbp_slot;
    m.rbp_based[pos] = rbp_based;
    ++recorded_;
  }

  ThreadMemo* t_ = nullptr;
  bool searching_ = false;
  bool recording_ = false;
  bool spliced_ = false;
  bool extending_ = false;  // extend(): recording the frames outside memo[0]
  size_t limit_ = kRecordCapacity;  // frames put() records at most
  long cursor_ = -1;  // find(): memo index of the innermost frame not yet passed
  size_t recorded_ = 0;
  Span stack_;
};

// This thread's memo. initial-exec (tls_model.h) and constinit: one %fs-relative access.
extern constinit thread_local ThreadMemo tls_memo MEMLOUPE_TLS_MODEL;

// set_tail_memo_enabled's flag.
extern constinit std::atomic<bool> g_tail_memo_enabled;

// The depth (frames above the start) from which a walk uses the memo: after
// deep walks ThreadMemo::deep_from (kMemoDeepFromDepth, or 0 where the inner
// frames repeat: a loop allocating at one site), kMemoFromDepth otherwise,
// never with the memo off. A hint
// read without taking the memo: a racing signal handler only changes which frames
// are memoised.
inline size_t memo_start_depth() noexcept {
  if (!g_tail_memo_enabled.load(std::memory_order_relaxed)) return SIZE_MAX;
  return tls_memo.m.count >= kMemoDeepFrames ? tls_memo.deep_from : kMemoFromDepth;
}

// Bumped by unwind_modules_changed(): memos from before are not used again.
void bump_memo_generation() noexcept;

// On by default. Off makes every walk step every frame through the rule cache (for
// benchmarks that measure that path, and tests that compare both).
void set_tail_memo_enabled(bool enabled) noexcept;

// Whether the memo's check compares the return-address slots with AVX2 (where
// the CPU has it: the default) or SSE2; returns whether the CPU has it. For
// tests that check both.
bool set_memo_check_avx2(bool on) noexcept;

// Splices made by this thread's walks so far.
MemoStats memo_stats() noexcept;

}  // namespace memloupe::recorder::unwind_detail
