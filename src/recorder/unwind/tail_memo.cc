#include "recorder/unwind/tail_memo.h"

#include <atomic>

#include "recorder/unwind/stack_memory.h"

namespace memloupe::recorder::unwind_detail {
namespace {

constexpr size_t kCapacity = 64;

// Frames of one walk, innermost first. Frame i was stepped to frame i + 1 by reading
// the return address at sp[i + 1] - 8 and, if rbp_slot[i] != 0, the caller's RBP at
// sp[i + 1] - 8 * rbp_slot[i].
struct Frames {
  uintptr_t sp[kCapacity] = {};
  uintptr_t pc[kCapacity] = {};
  uintptr_t bp[kCapacity] = {};
  uint8_t rbp_slot[kCapacity] = {};
  size_t count = 0;
  bool stops = false;  // frame count - 1 was the end of its stack

  void set(size_t i, const FrameState& f, uint8_t slot) {
    sp[i] = f.sp;
    pc[i] = f.pc;
    bp[i] = f.bp;
    rbp_slot[i] = slot;
  }
};

struct ThreadMemo {
  Frames buffers[2];
  unsigned current = 0;  // buffers[current] is the memo; the other one records
  uint32_t generation = 0;
  Span span;  // the stack span the memo's frames were read in
  bool busy = false;
  MemoStats stats;

  Frames& memo() { return buffers[current]; }
  Frames& spare() { return buffers[current ^ 1]; }
};

constinit thread_local ThreadMemo tls_memo __attribute__((tls_model("initial-exec")));
constinit std::atomic<uint32_t> g_generation{1};
constinit std::atomic<bool> g_enabled{true};

}  // namespace

void bump_memo_generation() noexcept { g_generation.fetch_add(1, std::memory_order_relaxed); }

void set_tail_memo_enabled(bool enabled) noexcept {
  g_enabled.store(enabled, std::memory_order_relaxed);
}

MemoStats memo_stats() noexcept { return tls_memo.stats; }

MemoSession::MemoSession(Span stack) noexcept : stack_(stack) {
  ThreadMemo& t = tls_memo;
  // A signal handler can only run to completion between these two statements, so it
  // either finds busy set or releases the memo before we take it.
  if (t.busy || !g_enabled.load(std::memory_order_relaxed)) return;
  t.busy = true;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  active_ = recording_ = true;
  searching_ = t.memo().count > 0 &&
               t.generation == g_generation.load(std::memory_order_relaxed) &&
               t.span.end == stack.end && stack.begin <= t.span.begin;
}

MemoSession::~MemoSession() {
  if (!active_) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_memo.busy = false;
}

void MemoSession::record(const FrameState& f) noexcept {
  if (!recording_) return;
  if (recorded_ == kCapacity) {
    recording_ = false;  // keep the innermost kCapacity frames; the rest is walked
    return;
  }
  tls_memo.spare().set(recorded_++, f, 0);
}

void MemoSession::set_last_rbp_slot(uint8_t slot) noexcept {
  if (recording_ && recorded_ > 0) tls_memo.spare().rbp_slot[recorded_ - 1] = slot;
}

int MemoSession::find(const FrameState& f) noexcept {
  if (!searching_) return -1;
  const Frames& m = tls_memo.memo();
  while (cursor_ < m.count && m.sp[cursor_] < f.sp) ++cursor_;
  if (cursor_ == m.count) {
    searching_ = false;
    return -1;
  }
  const size_t i = cursor_;
  return m.sp[i] == f.sp && m.pc[i] == f.pc && m.bp[i] == f.bp ? static_cast<int>(i) : -1;
}

size_t MemoSession::verify(size_t r, size_t last) const noexcept {
  const Frames& m = tls_memo.memo();
  // Every address read lies in [sp[r], span.end): sp grows outwards, sp[r] is the
  // walk's current sp (inside the span), and the memo's span is inside this one.
  for (size_t i = r; i < last; ++i) {
    const uintptr_t cfa = m.sp[i + 1];
    if (load_stack_word(cfa - 8) != m.pc[i + 1]) return i;
    const uintptr_t slot = m.rbp_slot[i];
    if (slot != 0 && load_stack_word(cfa - 8 * slot) != m.bp[i + 1]) return i;
  }
  return last;
}

size_t MemoSession::count() const noexcept { return tls_memo.memo().count; }
uintptr_t MemoSession::pc_at(size_t i) const noexcept { return tls_memo.memo().pc[i]; }

FrameState MemoSession::state_at(size_t i) const noexcept {
  const Frames& m = tls_memo.memo();
  return FrameState{m.sp[i], m.pc[i], m.bp[i]};
}

bool MemoSession::outermost_stops() const noexcept { return tls_memo.memo().stops; }

void MemoSession::commit_splice(size_t r, size_t k, size_t last) noexcept {
  if (!active_) return;
  spliced_ = true;
  ThreadMemo& t = tls_memo;
  Frames& m = t.memo();
  if (k != last) {
    ++t.stats.partial;
    m.count = 0;  // the outer frames changed: the next walk records afresh
    return;
  }
  ++t.stats.full;
  t.span = stack_;  // holds the old frames' span and the new frames' reads
  // Frames beyond `last` were not verified now; they stay, to be verified when used.
  Frames& fresh = t.spare();
  if (recorded_ == r) {  // as many new inner frames as old ones: replace them in place
    for (size_t i = 0; i < r; ++i) {
      m.set(i, FrameState{fresh.sp[i], fresh.pc[i], fresh.bp[i]}, fresh.rbp_slot[i]);
    }
    return;
  }
  size_t n = recorded_;
  for (size_t i = r; i < m.count && n < kCapacity; ++i, ++n) {
    fresh.set(n, FrameState{m.sp[i], m.pc[i], m.bp[i]}, m.rbp_slot[i]);
  }
  fresh.stops = m.stops && n == recorded_ + (m.count - r);
  fresh.count = n;
  t.current ^= 1;
}

void MemoSession::commit_fresh(bool stops) noexcept {
  if (!active_ || spliced_ || recorded_ == 0) return;
  ThreadMemo& t = tls_memo;
  Frames& fresh = t.spare();
  fresh.count = recorded_;
  // Only a stop right at the last recorded frame says the stack ends there.
  fresh.stops = stops && recording_;
  t.current ^= 1;
  t.generation = g_generation.load(std::memory_order_relaxed);
  t.span = stack_;
}

}  // namespace memloupe::recorder::unwind_detail
