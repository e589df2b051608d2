#include "format/frame_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "format/varint.h"

namespace memloupe::format {
namespace {

struct Encoded {
  std::vector<uint8_t> bytes;
  std::vector<uint16_t> slots;
};

Encoded encode(FrameCacheEncoder& fc, const std::vector<uint64_t>& outer, uint16_t ctx = 0) {
  std::vector<uint8_t> buf(outer.size() * 13 + 16);
  Encoded e;
  e.slots.resize(outer.size());
  uint8_t* end = fc.encode(outer.data(), 0, static_cast<unsigned>(outer.size()), ctx,
                           e.slots.data(), buf.data());
  e.bytes.assign(buf.data(), end);
  return e;
}

unsigned tag(const Encoded& e, size_t at) { return get_u16(e.bytes.data() + at) & 3; }

TEST(FrameCache, MissesThenOneHitWithPredictions) {
  auto fc = std::make_unique<FrameCacheEncoder>();
  const std::vector<uint64_t> bt = {0x401000, 0x401010, 0x402000, 0x403000};
  Encoded first = encode(*fc, bt);
  // Four misses: u16 codeword (tag 3) + zigzag varint delta to the outer neighbour.
  size_t at = 0;
  for (size_t i = 0; i < bt.size(); ++i) {
    EXPECT_EQ(tag(first, at), 3u);
    EXPECT_EQ(get_u16(first.bytes.data() + at) >> 2, first.slots[i]);
    EXPECT_EQ(fc->loc(first.slots[i]), bt[i]);
    at += 2 + varint_size(zigzag(static_cast<int64_t>(bt[i] - (i ? bt[i - 1] : 0))));
  }
  EXPECT_EQ(at, first.bytes.size());
  // The same backtrace again: a hit on the first frame, then 3 predicted frames.
  Encoded second = encode(*fc, bt);
  ASSERT_EQ(second.bytes.size(), 3u);
  EXPECT_EQ(tag(second, 0), 2u);
  EXPECT_EQ(second.bytes[2], 3);
  EXPECT_EQ(second.slots, first.slots);
}

TEST(FrameCache, OnePredictionUsesTagOne) {
  auto fc = std::make_unique<FrameCacheEncoder>();
  encode(*fc, {0x10, 0x20});
  Encoded e = encode(*fc, {0x10, 0x20});
  ASSERT_EQ(e.bytes.size(), 2u);
  EXPECT_EQ(tag(e, 0), 1u);
}

// memtrace's example: 200 frames of one recursive function cost a few bytes.
TEST(FrameCache, DeepRecursionIsCheap) {
  auto fc = std::make_unique<FrameCacheEncoder>();
  std::vector<uint64_t> bt(200, 0x555555554abcull);
  Encoded first = encode(*fc, bt);
  // A miss (codeword + 7-byte literal) leaves the slot predicting itself, so the
  // other 199 frames are one hit with 198 predictions.
  EXPECT_EQ(first.bytes.size(), 2 + 7 + 3u);
  Encoded second = encode(*fc, bt);
  EXPECT_EQ(second.bytes.size(), 3u);  // hit + 199 predictions
  EXPECT_EQ(second.bytes[2], 199);
}

TEST(FrameCache, RunsLongerThan255PredictionsSplit) {
  auto fc = std::make_unique<FrameCacheEncoder>();
  std::vector<uint64_t> bt;
  for (uint64_t i = 0; i < 256; ++i) bt.push_back(0x1000 + i * 16);
  encode(*fc, bt);
  Encoded again = encode(*fc, bt);
  // 256 frames: hit + 255 predictions covers all of them.
  EXPECT_EQ(again.bytes.size(), 3u);
  EXPECT_EQ(again.bytes[2], 255);
  bt.push_back(0x9999);
  encode(*fc, bt);
  again = encode(*fc, bt);
  // 257 frames: hit + 255, then a new hit + 1 prediction.
  EXPECT_EQ(again.bytes.size(), 5u);
  EXPECT_EQ(tag(again, 3), 0u);
}

TEST(FrameCache, ContextPredictsTheFirstFrame) {
  auto fc = std::make_unique<FrameCacheEncoder>();
  Encoded a = encode(*fc, {0x10, 0x20, 0x30});
  // Starting from the slot of 0x10 as context, [0x20, 0x30] is a hit + 1 prediction,
  // and the codeword names 0x20's slot.
  std::vector<uint64_t> rest = {0x20, 0x30};
  Encoded b = encode(*fc, rest, a.slots[0]);
  ASSERT_EQ(b.bytes.size(), 2u);
  EXPECT_EQ(get_u16(b.bytes.data()) >> 2, a.slots[1]);
  EXPECT_EQ(fc->next(a.slots[0]), a.slots[1]);
}

}  // namespace
}  // namespace memloupe::format
