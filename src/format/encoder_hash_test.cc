// The encoder's backtrace hash (encoder_state.h, State::hash_of) with its
// shortcuts — resuming from the frames shared with the thread bucket's previous
// backtrace, the short-backtrace memo — equals the format's definition from
// scratch (history.h, backtrace_hash) on every backtrace: a wrong hash puts the
// backtrace in another cache slot than the reader's.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

#include "format/encoder_state.h"

namespace memloupe::format {
namespace {

// A deep recursion as the recorder sees it: the unwinder keeps the innermost
// 128 frames, so past that depth consecutive backtraces share no outer frames,
// and the same depths come back round after round (docs/RECORDER.md: a memo of
// such backtraces was tried); now and then the recursion unwinds below 128
// frames, where backtraces resume from the outer frames they share again.
// Each of `threads` threads has its own recursion, interleaved, and threads 0
// and 8 share a bucket.
struct Step {
  uint32_t thread;
  std::vector<uint64_t> bt;  // innermost first
};
std::vector<Step> deep_rounds(uint64_t seed, unsigned threads, size_t count) {
  constexpr size_t kCut = 128;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint64_t>> stacks(threads);  // outermost first
  std::vector<Step> out;
  for (size_t k = 0; k < count; ++k) {
    const unsigned th = static_cast<unsigned>(rng() % threads);
    std::vector<uint64_t>& s = stacks[th];
    if (s.size() > 200 || rng() % 300 == 0) s.resize(60 + rng() % 80);  // the round ends, or unwinds far
    if (rng() % 3 != 0) {
      s.push_back(0x400000 + 0x10 * (s.size() % 7));  // deeper: the return address at this depth
    } else if (!s.empty()) {
      s.pop_back();
    }
    std::vector<uint64_t> bt(s.rbegin(), s.rend());
    // The allocating call's own frames, one of a few call sites.
    const size_t site = rng() % 3;
    for (size_t i = 0; i < 3 + site; ++i) bt.insert(bt.begin(), 0x700000 + 0x100 * site + i);
    if (bt.size() > kCut) bt.resize(kCut);
    out.push_back({th == 1 ? 8u : th, std::move(bt)});
  }
  return out;
}

TEST(EncoderHash, EveryShortcutGivesTheHashFromScratch) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto st = std::make_unique<encoder_detail::State>();
    const std::vector<Step> steps = deep_rounds(seed, 1 + seed % 3, 60000);
    size_t deep = 0, cut = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      st->thread = steps[k].thread;
      const std::vector<uint64_t>& bt = steps[k].bt;
      ASSERT_EQ(st->hash_of(bt, {}), backtrace_hash(bt)) << "seed " << seed << " step " << k;
      deep += bt.size() > encoder_detail::kShortFrames;
      cut += bt.size() == 128;
    }
    // The stream exercised what it is for: deep backtraces, many of them cut.
    EXPECT_GT(deep, steps.size() / 2) << "seed " << seed;
    EXPECT_GT(cut, steps.size() / 10) << "seed " << seed;
  }
}

// The same with the staging ring's hints (SharedPrefix: each thread's deep
// backtraces numbered, with the outer frames each shares with the one before),
// given for most backtraces and withheld at random, as when a chain breaks: the
// encoder then compares with the bucket's previous backtrace, whose frames it
// did not copy when a hint gave the shared count.
TEST(EncoderHash, HintedAndComparedBacktracesMixedGiveTheHashFromScratch) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    auto st = std::make_unique<encoder_detail::State>();
    const std::vector<Step> steps = deep_rounds(seed, 1 + seed % 3, 60000);
    std::mt19937_64 rng(seed + 100);
    std::vector<std::vector<uint64_t>> last(16);  // per thread, its previous deep backtrace
    std::vector<uint32_t> seq(16, 0);
    size_t hinted = 0, compared = 0;
    for (size_t k = 0; k < steps.size(); ++k) {
      const uint32_t th = steps[k].thread;
      st->thread = th;
      const std::vector<uint64_t>& bt = steps[k].bt;
      SharedPrefix hint;
      if (bt.size() > encoder_detail::kShortFrames) {
        const std::vector<uint64_t>& prev = last[th];
        const size_t most = std::min(bt.size(), prev.size());
        uint32_t shared = 0;
        while (shared < most && bt[bt.size() - 1 - shared] == prev[prev.size() - 1 - shared]) ++shared;
        ++seq[th];
        if (rng() % 4 != 0) {
          hint = {th + 1u, seq[th], shared};
          ++hinted;
        } else {
          ++compared;
        }
        last[th] = bt;
      }
      ASSERT_EQ(st->hash_of(bt, hint), backtrace_hash(bt)) << "seed " << seed << " step " << k;
    }
    EXPECT_GT(hinted, steps.size() / 3) << "seed " << seed;
    EXPECT_GT(compared, steps.size() / 10) << "seed " << seed;
  }
}

// Short backtraces (the memo's) of sites that differ only in their innermost
// frames, as a program's allocation sites below one thread entry do
// (bench_alloc_mt: ten 5-frame sites sharing their outer three frames): the
// memo keeps them in entries of their own, so that alternating sites find
// their hashes (placed by a middle frame they share, all ten took one entry
// and nearly every lookup missed), and every hash it gives is the one from
// scratch.
TEST(EncoderHash, ShortSitesUnderOneEntryTakeMemoEntriesOfTheirOwn) {
  auto st = std::make_unique<encoder_detail::State>();
  std::vector<std::vector<uint64_t>> sites;
  for (uint64_t i = 0; i < 10; ++i)
    sites.push_back({0x10b000 + 0x37 * i, 0x10b800 + 0x11 * (i / 3), 0x55704a3, 0x575f1f5, 0x57deb50});
  std::mt19937_64 rng(7);
  for (int k = 0; k < 2000; ++k) {
    const std::vector<uint64_t>& bt = sites[rng() % sites.size()];
    ASSERT_EQ(st->hash_of(bt, {}), backtrace_hash(bt)) << "step " << k;
  }
  size_t used = 0;
  for (const encoder_detail::ShortMemo& m : st->short_memo) used += m.n != 0;
  EXPECT_GE(used, 8u);
}

// The short memo's compare (State::same_short_frames, unrolled by the depth):
// equal exactly when the first n frames are, whatever lies past them.
TEST(EncoderHash, ShortFramesCompareEqualExactlyWhenTheirFirstNAre) {
  std::mt19937_64 rng(3);
  for (size_t n = 1; n <= encoder_detail::kShortFrames; ++n) {
    uint64_t a[encoder_detail::kShortFrames + 2], b[encoder_detail::kShortFrames + 2];
    for (uint64_t& f : a) f = rng();
    std::copy(std::begin(a), std::end(a), std::begin(b));
    EXPECT_TRUE(encoder_detail::State::same_short_frames(a, b, n)) << n;
    for (size_t i = 0; i < std::size(b); ++i) {
      b[i] ^= uint64_t{1} << (rng() % 64);
      EXPECT_EQ(encoder_detail::State::same_short_frames(a, b, n), i >= n) << n << " " << i;
      b[i] = a[i];
    }
  }
}

}  // namespace
}  // namespace memloupe::format
