// The per-thread memo of the last walk: reused tails must be exactly what walking
// frame by frame gives, also when the outer frames changed under equal inner states.
#include "recorder/unwind/tail_memo.h"

#include <alloca.h>
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "recorder/unwind/unwind.h"
#include "support/unwind_test_util.h"

namespace memloupe::recorder::unwind_detail {
namespace {

// Two walks from the caller's frame (always inlined into it, so out[0] is the
// caller's own call site): with the memo, counting its splices, and without it.
struct MemoWalk {
  std::vector<uint64_t> frames, plain;
  MemoStats before, after;
};

[[gnu::always_inline]] inline void walk_with_and_without_memo(MemoWalk& w, size_t max_frames) {
  uint64_t buf[256];
  w.before = memo_stats();
  w.frames.assign(buf, buf + unwind_here(buf, max_frames, 0));
  w.after = memo_stats();
  set_tail_memo_enabled(false);
  w.plain.assign(buf, buf + unwind_here(buf, max_frames, 0));
  set_tail_memo_enabled(true);
}

// Unwinds with the memo and without it from the same frame; both must match libunwind.
struct Both {
  Stacks with_memo;
  std::vector<uint64_t> without_memo;
};

__attribute__((noinline)) void capture_both(Both& b) {
  b.with_memo = capture_stacks(256);
  set_tail_memo_enabled(false);
  const Stacks plain = capture_stacks(256);
  set_tail_memo_enabled(true);
  b.without_memo = plain.fast;
  MEMLOUPE_KEEP_FRAME();
}

void expect_consistent(const Both& b) {
  EXPECT_EQ(b.with_memo.outcome, Outcome::kComplete);
  EXPECT_EQ(b.with_memo.fast, b.with_memo.libunwind);
  EXPECT_EQ(b.with_memo.api, b.with_memo.fast);
  // The two captures are two call sites in capture_both: compare from index 1.
  ASSERT_EQ(b.without_memo.size(), b.with_memo.fast.size());
  EXPECT_TRUE(std::equal(b.without_memo.begin() + 1, b.without_memo.end(),
                         b.with_memo.fast.begin() + 1));
}

__attribute__((noinline)) void recurse_to(Both& b, int depth) {
  if (depth == 0) {
    capture_both(b);
  } else {
    recurse_to(b, depth - 1);
  }
  MEMLOUPE_KEEP_FRAME();
}

// Depths above and below the memo capacity (64): splices into deeper and shallower
// stacks, and walks that record more frames than the memo holds.
TEST(TailMemo, RecursionAtVaryingDepthsSplicesAndStaysExact) {
  const MemoStats before = memo_stats();
  for (const int depth : {50, 20, 80, 10, 80, 3, 60}) {
    Both b;
    recurse_to(b, depth);
    expect_consistent(b);
    EXPECT_GT(b.with_memo.fast.size(), static_cast<size_t>(depth));
  }
  EXPECT_GT(memo_stats().full, before.full);
}

// Two callers with identical frames call the same function, so the frame of `middle`
// has the same sp, pc and bp under both; only the return address above it differs.
// The recursion puts `middle` past the frames that walks do not memoise.
template <int kWhich>
__attribute__((noinline)) void outer(Both& b, std::vector<uint64_t>& ra);

__attribute__((noinline)) void middle(Both& b) {
  recurse_to(b, static_cast<int>(kMemoFromDepth));
  MEMLOUPE_KEEP_FRAME();
}

template <int kWhich>
__attribute__((noinline)) void outer(Both& b, std::vector<uint64_t>& ra) {
  middle(b);
  MEMLOUPE_RECORD_RA(ra);
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void call_both(Both& first, Both& second, std::vector<uint64_t>& ra1,
                                         std::vector<uint64_t>& ra2) {
  outer<1>(first, ra1);
  outer<2>(second, ra2);
  MEMLOUPE_KEEP_FRAME();
}

TEST(TailMemo, ChangedCallerAboveAnEqualFrameIsNotReused) {
  Both first, second;
  std::vector<uint64_t> ra1, ra2;
  const MemoStats before = memo_stats();
  call_both(first, second, ra1, ra2);
  expect_consistent(first);
  expect_consistent(second);
  // Each walk holds its own caller's return address, not the other's.
  EXPECT_GE(find_chain(first.with_memo.fast, ra1), 0);
  EXPECT_GE(find_chain(second.with_memo.fast, ra2), 0);
  EXPECT_LT(find_chain(second.with_memo.fast, ra1), 0);
  EXPECT_GT(memo_stats().partial, before.partial);
}

// Every frame's CFA based on RBP (alloca), some frames between them that are
// not: the memo's check follows RBP through the saved slots to each RBP-based
// step, sixteen steps at a time past the others. Consecutive walks at other
// depths splice into each other over tens of such frames.
__attribute__((noinline)) void alloca_recurse(Both& b, int depth, size_t bytes);
__attribute__((noinline)) void plain_step(Both& b, int depth, size_t bytes) {
  alloca_recurse(b, depth, bytes);
  MEMLOUPE_KEEP_FRAME();
}
__attribute__((noinline)) void alloca_recurse(Both& b, int depth, size_t bytes) {
  auto* buf = static_cast<volatile char*>(alloca(bytes + static_cast<size_t>(depth % 3) * 16));
  buf[0] = 1;
  if (depth == 0) {
    capture_both(b);
  } else if (depth % 5 == 0) {
    plain_step(b, depth - 1, bytes);
  } else {
    alloca_recurse(b, depth - 1, bytes);
  }
  buf[1] = 2;
  MEMLOUPE_KEEP_FRAME();
}

// The check's first pass compares the return-address slots four at a time (in
// two vector pairs, the memo's pcs swapped to match; with AVX2 in one 256-bit
// vector, the slots swapped to be written) and the rest one at a time: a
// changed slot at every position of a block and of the tail, from splice
// points that place the blocks differently, must end the check exactly
// there, with the remembered pcs up to it written innermost first, on both
// paths. On a hand-made memo over a buffer standing for the stack, in a
// thread of its own (its memo is nobody else's).
TEST(TailMemo, TheCheckStopsAtTheFirstChangedSlotWhereverItLies) {
  for (const bool avx2 : {true, false}) {
    if (!set_memo_check_avx2(avx2) && avx2) continue;  // no AVX2 here: the SSE2 path only
    std::thread([] {
      constexpr size_t kFrames = 40;
      std::vector<uintptr_t> stack(4 * kFrames);
      const auto top = reinterpret_cast<uintptr_t>(stack.data() + stack.size());
      MemoFrames& m = tls_memo.m;
      for (size_t i = 0; i < kFrames; ++i) {  // outermost first: sp falls with i, by 8 to 40 bytes
        m.sp[i] = top - 8 * (3 * i + 2 + i % 3);
        m.pc[i] = 0x401000 + 0x40 * i;
      }
      m.count = kFrames;
      // Step i (from frame i to frame i - 1) reads its return address at sp[i - 1] - 8.
      const auto slot = [&m](size_t i) -> uintptr_t& { return *reinterpret_cast<uintptr_t*>(m.sp[i - 1] - 8); };
      for (size_t i = 1; i < kFrames; ++i) slot(i) = m.pc[i - 1];
      MemoSession memo;
      memo.begin(Span{reinterpret_cast<uintptr_t>(stack.data()), top});
      for (const size_t r : {kFrames - 1, kFrames - 3, kFrames - 6, kFrames - 8}) {
        for (const size_t last : {size_t{0}, size_t{5}}) {
          for (size_t changed = last + 1; changed <= r + 1; ++changed) {  // r + 1: none changed
            if (changed <= r) slot(changed) ^= 0x10;
            const size_t expected = changed <= r ? changed : last;
            uint64_t out[kFrames] = {};
            const Verified v = memo.verify(r, 0, last, out);
            EXPECT_EQ(v.last_good, expected)
                << "slot " << changed << " changed, checked from " << r << " to " << last;
            for (size_t j = 0; j <= r - expected; ++j) {
              EXPECT_EQ(out[j], m.pc[r - j]) << "frame " << j << ", slot " << changed << " changed";
            }
            EXPECT_EQ(memo.verify(r, 0, last).last_good, expected);
            if (changed <= r) slot(changed) ^= 0x10;
          }
        }
      }
    }).join();
  }
  set_memo_check_avx2(true);
}

TEST(TailMemo, RbpBasedFramesAreCheckedThroughSavedRbp) {
  for (const size_t bytes : {32u, 400u}) {
    const MemoStats before = memo_stats();
    for (const int depth : {60, 45, 60, 90, 30, 90, 100}) {
      Both b;
      alloca_recurse(b, depth, bytes);
      expect_consistent(b);
      EXPECT_GT(b.with_memo.fast.size(), static_cast<size_t>(depth));
    }
    // The walks after the first reuse most of their frames.
    EXPECT_GE(memo_stats().full, before.full + 6);
    EXPECT_GT(memo_stats().reused, before.reused + 6 * 25);
  }
}

TEST(TailMemo, ModulesChangedDiscardsTheMemo) {
  uint64_t frames[256];
  fast_unwind_here(frames, 256, 0);  // records a memo
  unwind_modules_changed();
  const MemoStats before = memo_stats();
  fast_unwind_here(frames, 256, 0);  // may not reuse it
  const MemoStats after_change = memo_stats();
  EXPECT_EQ(after_change.full, before.full);
  EXPECT_EQ(after_change.partial, before.partial);
  fast_unwind_here(frames, 256, 0);  // reuses the memo recorded just before
  EXPECT_EQ(memo_stats().full, after_change.full + 1);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

namespace memloupe::recorder::unwind_detail {
namespace {

// Stacks of distinct functions, walked with limits below, at and above the memo's
// capacity, in an order that makes each walk splice into the previous one's memo.
struct LimitedWalks {
  size_t max_frames = 0;
  std::vector<uint64_t> first, second, plain, reference;
};

__attribute__((noinline)) void walk_limited(LimitedWalks& w) {
  std::vector<uint64_t> buf(w.max_frames);
  w.first.assign(buf.begin(), buf.begin() + unwind_here(buf.data(), w.max_frames, 0));
  w.second.assign(buf.begin(), buf.begin() + unwind_here(buf.data(), w.max_frames, 0));
  set_tail_memo_enabled(false);
  w.plain.assign(buf.begin(), buf.begin() + unwind_here(buf.data(), w.max_frames, 0));
  set_tail_memo_enabled(true);
  MEMLOUPE_KEEP_FRAME();
}

template <int N>
__attribute__((noinline)) void level(int remaining, LimitedWalks& w) {
  char pad[16 * (N % 4) + 8] = {};
  asm volatile("" : : "r"(pad) : "memory");
  if constexpr (N > 0) {
    if (remaining > 0) {
      level<N - 1>(remaining - 1, w);
      MEMLOUPE_KEEP_FRAME();
      return;
    }
  }
  walk_limited(w);
}

TEST(TailMemo, TruncatedWalksOfDifferentDepthsAndLimits) {
  const std::pair<int, size_t> runs[] = {{36, 32}, {132, 128}, {12, 8},  {132, 128},
                                         {70, 64}, {132, 128}, {132, 8}, {36, 128}};
  for (const auto& [depth, max_frames] : runs) {
    LimitedWalks w;
    w.max_frames = max_frames;
    level<140>(depth, w);
    // The three calls in walk_limited differ in their first address only.
    ASSERT_EQ(w.first.size(), w.plain.size()) << depth << " " << max_frames;
    ASSERT_EQ(w.second.size(), w.plain.size()) << depth << " " << max_frames;
    EXPECT_TRUE(std::equal(w.first.begin() + 1, w.first.end(), w.plain.begin() + 1));
    EXPECT_TRUE(std::equal(w.second.begin() + 1, w.second.end(), w.plain.begin() + 1));
    if (static_cast<size_t>(depth) > max_frames) {
      EXPECT_EQ(w.plain.size(), max_frames);
    }
  }
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

namespace memloupe::recorder::unwind_detail {
namespace {

// A stack deeper than the memo's capacity, walked every 40 levels on the way
// down (each walk as deep as the recorder's, splicing into the one before and
// adding its new inner frames to the memo) and twice at the bottom: the memo
// fills up and keeps the innermost frames, so the last walk takes all but its
// first kMemoDeepFromDepth frames from it (when the memo kept the outermost ones
// instead, the walk stepped the inner frames the memo lacked), and equals a walk
// without the memo.
struct DeepWalks : MemoWalk {
  size_t memo_frames = 0;
};

__attribute__((noinline)) void dive(int level, int bottom, DeepWalks& d) {
  uint64_t buf[kRecordCapacity];
  if (level >= 100 && level % 40 == 0) unwind_here(buf, kRecordCapacity, 0);
  if (level < bottom) {
    dive(level + 1, bottom, d);
    MEMLOUPE_KEEP_FRAME();
    return;
  }
  unwind_here(buf, kRecordCapacity, 0);  // splices into the walk 40 levels up
  d.memo_frames = tls_memo.m.count;
  walk_with_and_without_memo(d, kRecordCapacity);
  MEMLOUPE_KEEP_FRAME();
}

TEST(TailMemo, StacksDeeperThanTheMemoKeepTheirInnermostFrames) {
  DeepWalks d;
  dive(0, static_cast<int>(kMemoCapacity) + 60, d);
  EXPECT_EQ(d.memo_frames, kMemoCapacity);
  ASSERT_EQ(d.frames.size(), kRecordCapacity);
  ASSERT_EQ(d.plain.size(), kRecordCapacity);
  // The calls differ in their first address (the call site in dive) only.
  EXPECT_TRUE(std::equal(d.frames.begin() + 1, d.frames.end(), d.plain.begin() + 1));
  EXPECT_EQ(d.after.full, d.before.full + 1);
  EXPECT_EQ(d.after.reused - d.before.reused, kRecordCapacity - kMemoDeepFromDepth);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

namespace memloupe::recorder::unwind_detail {
namespace {

// Two walks whose inner frames have equal sp and pc under different callers
// (via<1>, via<2>), below a common stack: the second walk's check fails at its
// caller, and the frames further out (`nest`'s, the test's) still come from the
// memo, exactly as walking gives them.
using CallerWalk = MemoWalk;

__attribute__((noinline)) void leaf_walk(CallerWalk& w, int depth) {
  if (depth > 0) {
    leaf_walk(w, depth - 1);
    MEMLOUPE_KEEP_FRAME();
    return;
  }
  walk_with_and_without_memo(w, 256);
  MEMLOUPE_KEEP_FRAME();
}

template <int kWhich>
__attribute__((noinline)) void via(CallerWalk& w) {
  leaf_walk(w, static_cast<int>(kMemoFromDepth));
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void nest(int depth, CallerWalk& a, CallerWalk& b) {
  if (depth > 0) {
    nest(depth - 1, a, b);
    MEMLOUPE_KEEP_FRAME();
    return;
  }
  via<1>(a);
  via<2>(b);
  MEMLOUPE_KEEP_FRAME();
}

TEST(TailMemo, AFailedCheckStillReusesTheFramesFurtherOut) {
  CallerWalk a, b;
  nest(20, a, b);
  for (const CallerWalk* w : {&a, &b}) {
    ASSERT_EQ(w->frames.size(), w->plain.size());
    EXPECT_TRUE(std::equal(w->frames.begin() + 1, w->frames.end(), w->plain.begin() + 1));
  }
  EXPECT_GT(b.after.partial, b.before.partial);
  EXPECT_EQ(b.after.full, b.before.full + 1);
  EXPECT_GE(b.after.reused - b.before.reused, 20u);
  EXPECT_NE(a.frames, b.frames);  // the callers differ
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

namespace memloupe::recorder::unwind_detail {
namespace {

// A walk that records as many frames as it may (kRecordCapacity) on a deeper
// stack leaves the memo without the outer frames. A later, shallower walk that
// splices into it steps on from its outermost frame and records what it steps
// as the memo's new outer frames, so the walk after it reuses all its frames
// but the first kMemoDeepFromDepth. (Before, those outer frames were stepped by
// every walk until one met no remembered frame at all.)
__attribute__((noinline)) void climb(int level, int bottom, int shallow, MemoWalk& s) {
  uint64_t buf[256];
  if (level < bottom) {
    climb(level + 1, bottom, shallow, s);
    if (level == shallow) {
      unwind_here(buf, 256, 0);  // splices into the bottom's memo, then extends it
      walk_with_and_without_memo(s, 256);
    }
    MEMLOUPE_KEEP_FRAME();
    return;
  }
  unwind_here(buf, 256, 0);  // records the innermost kRecordCapacity frames
  MEMLOUPE_KEEP_FRAME();
}

TEST(TailMemo, AShallowerWalkExtendsTheMemoOutwards) {
  MemoWalk s;
  // The bottom's walk records levels 65..200; the shallow walks' stacks (100
  // levels and the test's frames) reach further out than that.
  climb(0, static_cast<int>(kRecordCapacity) + 64, static_cast<int>(kRecordCapacity) - 36, s);
  ASSERT_EQ(s.frames.size(), s.plain.size());
  ASSERT_GT(s.plain.size(), kRecordCapacity - 36);
  ASSERT_LT(s.plain.size(), kRecordCapacity);
  EXPECT_EQ(s.plain.back(), s.frames.back());
  // The calls differ in their first address (the call site in climb) only.
  EXPECT_TRUE(std::equal(s.frames.begin() + 1, s.frames.end(), s.plain.begin() + 1));
  EXPECT_EQ(s.after.full, s.before.full + 1);
  EXPECT_EQ(s.after.reused - s.before.reused, s.frames.size() - kMemoDeepFromDepth);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

namespace memloupe::recorder::unwind_detail {
namespace {

// verify() skips its RBP pass when the memo's count of RBP-based steps
// (based_upto) is the same at both ends of the checked range, so the count
// must be right after every kind of commit, on a stack that mixes RBP-based
// frames (alloca) with plain ones: a fresh walk, a splice, a splice that
// extends the memo outwards, and one that drops the memo's outer frames. (A
// stale count would skip RBP checks where RBP can differ.)
struct CountCheck {
  size_t checks = 0, rbp_based = 0;
  std::vector<std::string> wrong;
};

void check_counts(CountCheck& c, const char* when) {
  const MemoFrames& m = tls_memo.m;
  unsigned n = 0;
  for (size_t i = 0; i < m.count; ++i) {
    n += m.rbp_based[i] ? 1 : 0;
    if (m.based_upto[i] != n) {
      c.wrong.push_back(std::string(when) + ": frame " + std::to_string(i) + " of " + std::to_string(m.count));
      break;
    }
  }
  ++c.checks;
  c.rbp_based += n;
}

__attribute__((noinline)) void mixed_climb(int level, int bottom, int turn, CountCheck& c);
__attribute__((noinline)) void mixed_plain(int level, int bottom, int turn, CountCheck& c) {
  mixed_climb(level + 1, bottom, turn, c);
  MEMLOUPE_KEEP_FRAME();
}
__attribute__((noinline)) void mixed_climb(int level, int bottom, int turn, CountCheck& c) {
  auto* buf = static_cast<volatile char*>(alloca(32 + static_cast<size_t>(level % 3) * 16));
  buf[0] = 1;
  uint64_t frames[256];
  if (level < bottom) {
    if (level % 5 == 0) {
      mixed_plain(level, bottom, turn, c);
    } else {
      mixed_climb(level + 1, bottom, turn, c);
    }
    if (level == turn) {
      unwind_here(frames, 256, 0);  // splices into the bottom's memo, then extends it
      check_counts(c, "extended");
      unwind_here(frames, 256, 0);
      check_counts(c, "spliced");
      // Deeper again: its new inner frames and the memo's do not fit together,
      // so the splice drops the memo's outermost frames.
      mixed_climb(level + 1, level + 110, -1, c);
    }
  } else {
    unwind_here(frames, 256, 0);  // a fresh walk first, then a splice that drops
    check_counts(c, "at the bottom");
  }
  buf[1] = 2;
  MEMLOUPE_KEEP_FRAME();
}

TEST(TailMemo, TheCountOfRbpBasedStepsFollowsEveryCommit) {
  CountCheck c;
  const int bottom = static_cast<int>(kMemoCapacity) + 40;
  mixed_climb(0, bottom, bottom - 100, c);
  EXPECT_EQ(c.checks, 4u);
  EXPECT_GT(c.rbp_based, 0u);  // the memo held RBP-based steps
  EXPECT_TRUE(c.wrong.empty()) << c.wrong.front();
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail

namespace memloupe::recorder::unwind_detail {
namespace {

// Where deep walks search the memo from (ThreadMemo::deep_from, found_at): a
// site that repeats whole on a deep stack ends up found at the first frame
// (after at most kDeepProbe walks from kMemoDeepFromDepth), every frame then
// reused; walks whose innermost frames change send it back to
// kMemoDeepFromDepth. Every walk equals one without the memo.
struct DeepFrom {
  MemoWalk w;
  size_t mismatches = 0;
};

__attribute__((noinline)) void repeat_site(DeepFrom& d) {
  for (int i = 0; i < 2 * MemoSession::kDeepProbe + 2; ++i) {
    walk_with_and_without_memo(d.w, 256);
    // The two walks are two call sites: compare from index 1.
    if (!std::equal(d.w.frames.begin() + 1, d.w.frames.end(), d.w.plain.begin() + 1)) ++d.mismatches;
  }
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void site_a(DeepFrom& d) {
  walk_with_and_without_memo(d.w, 256);
  if (!std::equal(d.w.frames.begin() + 1, d.w.frames.end(), d.w.plain.begin() + 1)) ++d.mismatches;
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void site_b(DeepFrom& d) {
  char* const pad = static_cast<char*>(alloca(96));  // another frame size: another sp below
  asm volatile("" : : "r"(pad) : "memory");
  walk_with_and_without_memo(d.w, 256);
  if (!std::equal(d.w.frames.begin() + 1, d.w.frames.end(), d.w.plain.begin() + 1)) ++d.mismatches;
  MEMLOUPE_KEEP_FRAME();
}

__attribute__((noinline)) void deep_from_at(int depth, DeepFrom& d, bool repeat) {
  if (depth > 0) {
    deep_from_at(depth - 1, d, repeat);
    MEMLOUPE_KEEP_FRAME();
    return;
  }
  if (repeat) {
    repeat_site(d);
  } else {
    for (int i = 0; i < 6; ++i) {
      if (i % 2 == 0) {
        site_a(d);
      } else {
        site_b(d);
      }
    }
  }
  MEMLOUPE_KEEP_FRAME();
}

TEST(TailMemo, DeepWalksSearchFromTheFirstFrameOnlyWhereItRepeats) {
  DeepFrom d;
  deep_from_at(40, d, true);
  EXPECT_EQ(d.mismatches, 0u);
  EXPECT_EQ(tls_memo.deep_from, 0u);
  EXPECT_EQ(d.w.after.full, d.w.before.full + 1);
  EXPECT_EQ(d.w.after.reused - d.w.before.reused, d.w.frames.size());  // every frame
  deep_from_at(40, d, false);
  EXPECT_EQ(d.mismatches, 0u);
  EXPECT_EQ(tls_memo.deep_from, kMemoDeepFromDepth);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
