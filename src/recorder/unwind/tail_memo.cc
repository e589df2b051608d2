#include "recorder/unwind/tail_memo.h"

#include <atomic>

#include "recorder/unwind/stack_memory.h"

namespace memloupe::recorder::unwind_detail {
namespace {

constinit thread_local ThreadMemo tls_memo __attribute__((tls_model("initial-exec")));
constinit std::atomic<uint32_t> g_generation{1};
constinit std::atomic<bool> g_enabled{true};

void copy_frame(MemoFrames& to, size_t i, const MemoFrames& from, size_t j) {
  to.sp[i] = from.sp[j];
  to.pc[i] = from.pc[j];
  to.bp[i] = from.bp[j];
  to.rbp_slot[i] = from.rbp_slot[j];
  to.rbp_based[i] = from.rbp_based[j];
}

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
  t_ = &t;
  recording_ = true;
  searching_ = t.buffers[t.current].count > 0 &&
               t.generation == g_generation.load(std::memory_order_relaxed) &&
               t.span.end == stack.end && stack.begin <= t.span.begin;
  cursor_ = static_cast<long>(t.buffers[t.current].count) - 1;
}

MemoSession::~MemoSession() {
  if (t_ == nullptr) return;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_->busy = false;
}

Verified MemoSession::verify(size_t r, uintptr_t bp, size_t last) const noexcept {
  const MemoFrames& m = frames();
  // Every address read lies in [sp[r], span.end): sp grows outwards, sp[r] is the
  // walk's current sp (inside the span), and the memo's span is inside this one.
  for (size_t i = r; i > last; --i) {
    const uintptr_t cfa = m.sp[i - 1];
    if (m.rbp_based[i] && bp != m.bp[i]) return {i, bp};  // another CFA
    if (load_stack_word(cfa - 8) != m.pc[i - 1]) return {i, bp};
    if (m.rbp_slot[i] != 0) bp = load_stack_word(cfa - 8 * uintptr_t{m.rbp_slot[i]});
  }
  return {last, bp};
}

void MemoSession::commit_splice(size_t r, size_t good, size_t last) noexcept {
  if (t_ == nullptr) return;
  spliced_ = true;
  ThreadMemo& t = *t_;
  MemoFrames& m = t.buffers[t.current];
  if (good != last) {
    ++t.stats.partial;
    m.count = 0;  // the outer frames changed: the next walk records afresh
    return;
  }
  ++t.stats.full;
  t.span = stack_;  // holds the old frames' span and the new frames' reads
  // Frames outside [last, r] were not checked now; they stay, to be checked when
  // used. The recorded frames end with the one that stepped into memo[r]; they go
  // inwards from r + 1 (as many as fit; the innermost ones are dropped).
  // If recording stopped (too many new frames), the recorded ones do not reach
  // memo[r]: a chain with a gap would be wrong, so none are kept.
  const MemoFrames& rec = t.buffers[t.current ^ 1];
  size_t n = 0;
  for (; recording_ && n < recorded_ && r + 1 + n < kMemoCapacity; ++n) {
    copy_frame(m, r + 1 + n, rec, recorded_ - 1 - n);
  }
  m.count = r + 1 + n;
}

void MemoSession::commit_fresh(bool stops) noexcept {
  if (t_ == nullptr || spliced_ || recorded_ == 0) return;
  ThreadMemo& t = *t_;
  MemoFrames& m = t.buffers[t.current];
  const MemoFrames& rec = t.buffers[t.current ^ 1];
  for (size_t i = 0; i < recorded_; ++i) copy_frame(m, i, rec, recorded_ - 1 - i);
  m.count = recorded_;
  // Only a stop right at the last recorded frame says the stack ends there.
  m.stops = stops && recording_;
  t.generation = g_generation.load(std::memory_order_relaxed);
  t.span = stack_;
}

}  // namespace memloupe::recorder::unwind_detail
