#include "ctf/ctf_backtrace.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace memloupe::reader::ctf {
namespace {

// Codewords written by hand, following the reference description of the format.
class Codewords {
 public:
  Codewords& miss(uint16_t slot, uint64_t code) {
    out_.u16(static_cast<uint16_t>(slot << 2 | 3));
    out_.u64(code);
    ++n_;
    return *this;
  }
  Codewords& hit(uint16_t slot, unsigned predictions) {
    if (predictions <= 1) {
      out_.u16(static_cast<uint16_t>(slot << 2 | predictions));
    } else {
      out_.u16(static_cast<uint16_t>(slot << 2 | 2));
      out_.u8(static_cast<uint8_t>(predictions));
    }
    ++n_;
    return *this;
  }
  // Decodes these codewords after `common` frames of the previous backtrace.
  std::vector<uint64_t> decode(BacktraceDecoder& d, uint64_t common) const {
    Cursor in(out_.bytes(), 0, out_.size());
    d.decode(in, common, n_);
    EXPECT_FALSE(in.failed()) << in.error().message;
    EXPECT_TRUE(in.at_end());
    return {d.frames().begin(), d.frames().end()};
  }

 private:
  Out out_;
  uint32_t n_ = 0;
};

using Frames = std::vector<uint64_t>;

TEST(CtfBacktraceDecoder, FollowsTheReferenceDecode) {
  BacktraceDecoder d;
  // Misses fill slots and link each slot to the next: pred[0]=5, pred[5]=9.
  EXPECT_EQ(Codewords().miss(5, 0xA).miss(9, 0xB).decode(d, 0), (Frames{0xA, 0xB}));
  // A hit on slot 5 with one prediction yields slot 5 then pred[5] = slot 9.
  EXPECT_EQ(Codewords().hit(5, 1).decode(d, 0), (Frames{0xA, 0xB}));
  // Keep the first frame; the start context is slot 0 again, so pred[0] = 9.
  EXPECT_EQ(Codewords().miss(9, 0xC).decode(d, 1), (Frames{0xA, 0xC}));
  EXPECT_TRUE(d.verify(0, 9, 0));     // slot 0: never filled, predicts 9
  EXPECT_TRUE(d.verify(5, 9, 0xA));
  EXPECT_TRUE(d.verify(9, 0, 0xC));   // C replaced B
  EXPECT_FALSE(d.verify(9, 0, 0xB));
  EXPECT_FALSE(d.verify(5, 8, 0xA));
  EXPECT_TRUE(d.verify(kNoVerify, 1, 2));  // "no check"
  EXPECT_FALSE(d.verify(kCacheSize, 0, 0));
}

TEST(CtfBacktraceDecoder, CountedPredictionsFollowTheChain) {
  BacktraceDecoder d;
  EXPECT_EQ(Codewords().miss(1, 10).miss(2, 20).miss(3, 30).miss(4, 40).decode(d, 0),
            (Frames{10, 20, 30, 40}));
  EXPECT_EQ(Codewords().hit(1, 3).decode(d, 0), (Frames{10, 20, 30, 40}));
  EXPECT_EQ(Codewords().hit(2, 2).decode(d, 0), (Frames{20, 30, 40}));
  // A slot that predicts itself (recursion): 1 + 5 copies.
  EXPECT_EQ(Codewords().miss(7, 70).hit(7, 0).decode(d, 0), (Frames{70, 70}));  // pred[7] = 7
  EXPECT_EQ(Codewords().hit(7, 5).decode(d, 0), (Frames(6, 70)));
}

TEST(CtfBacktraceDecoder, PrefixLongerThanPreviousKeepsPrevious) {
  BacktraceDecoder d;
  EXPECT_EQ(Codewords().miss(1, 10).decode(d, 0), (Frames{10}));
  // memtrace: the codewords still update the cache, the result stays the previous one.
  EXPECT_EQ(Codewords().miss(2, 20).decode(d, 3), (Frames{10}));
  EXPECT_EQ(Codewords().hit(2, 0).decode(d, 1), (Frames{10, 20}));
}

TEST(CtfBacktraceDecoder, TruncatedCodewordNamesTheOffset) {
  Out out;
  out.u16(5 << 2 | 3);  // a miss whose literal is cut off
  out.u32(1);
  BacktraceDecoder d;
  Cursor in(out.bytes(), 0, out.size());
  d.decode(in, 0, 1);
  ASSERT_TRUE(in.failed());
  EXPECT_EQ(in.error().offset, 2u);
  EXPECT_NE(in.error().message.find("backtrace location code"), std::string::npos);
}

// Encodes `bt` (innermost first) and decodes it again; returns the decoded frames
// innermost first and the codeword bytes.
struct Coded {
  Frames frames;
  size_t bytes;
};
Coded round_trip(BacktraceEncoder& e, BacktraceDecoder& d, const Frames& bt, uint64_t date) {
  Out out;
  uint64_t common = e.common_prefix(bt);
  uint32_t misses = 0;
  uint32_t n = e.encode(bt, common, date, out, [&](uint64_t) { ++misses; });
  Cursor in(out.bytes(), 0, out.size());
  d.decode(in, common, n);
  EXPECT_FALSE(in.failed());
  EXPECT_TRUE(in.at_end());
  EXPECT_LE(n, bt.size() - common);
  return {Frames(d.frames().rbegin(), d.frames().rend()), out.size()};
}

TEST(CtfBacktraceCodec, RecursionCostsAFewBytes) {
  BacktraceEncoder e;
  BacktraceDecoder d;
  Frames bt{0x100};  // allocation site, 200 recursive frames, main
  bt.insert(bt.end(), 200, 0x200);
  bt.push_back(0x300);
  EXPECT_EQ(round_trip(e, d, bt, 1).frames, bt);
  Frames other = bt;  // same recursion, new site and new caller: nothing shared
  other.front() = 0x101;
  other.back() = 0x301;
  Coded c = round_trip(e, d, other, 2);
  EXPECT_EQ(c.frames, other);
  // main misses (10 B); the recursion's slot last predicted the old site, so the
  // first recursive frame is a plain hit (2 B) and the rest one hit with 198
  // predictions (3 B); the site misses (10 B): 202 frames in 25 bytes.
  EXPECT_EQ(c.bytes, 25u);
}

TEST(CtfBacktraceCodec, RandomStreamsRoundTrip) {
  std::mt19937_64 rng(42);
  BacktraceEncoder e;
  BacktraceDecoder d;
  Frames previous;
  for (uint64_t date = 1; date <= 4000; ++date) {
    Frames bt;
    switch (rng() % 4) {
      case 0:  // share an outer part with the previous backtrace, new inner frames
        bt.assign(previous.begin() + static_cast<long>(rng() % (previous.size() + 1)), previous.end());
        for (int i = rng() % 20; i > 0; --i) bt.insert(bt.begin(), 0x1000 + rng() % 300);
        break;
      case 1:  // deep recursion
        bt.assign(rng() % 600, 0x5000 + rng() % 4);
        bt.push_back(0x6000);
        break;
      case 2:  // many distinct codes: evictions (more than the 16,384 slots overall)
        for (int i = rng() % 64; i > 0; --i) bt.push_back(rng());
        break;
      default:  // a hot set, rapidly changing order
        for (int i = rng() % 40; i > 0; --i) bt.push_back(0x9000 + rng() % 16);
    }
    Coded c = round_trip(e, d, bt, date);
    ASSERT_EQ(c.frames, bt) << "backtrace " << date;
    previous = bt;
    if (date % 97 == 0) {
      auto v = e.next_verifier();
      ASSERT_TRUE(d.verify(v.ix, v.pred, v.value));
    }
  }
}

TEST(CtfBacktraceCodec, OverlongBacktraceKeepsItsOutermostFrames) {
  BacktraceEncoder e;
  BacktraceDecoder d;
  Frames bt;
  for (uint64_t i = 0; i < 3000; ++i) bt.push_back(0x10000 + i);  // 3000 misses: 30 KB
  Coded c = round_trip(e, d, bt, 1);
  EXPECT_LE(c.bytes, kMaxBacktraceBytes);
  ASSERT_LT(c.frames.size(), bt.size());
  EXPECT_EQ(c.frames.size(), kMaxBacktraceBytes / 10);
  // The innermost frames are the ones dropped.
  EXPECT_TRUE(std::equal(c.frames.begin(), c.frames.end(), bt.end() - static_cast<long>(c.frames.size())));
  // The next backtrace shares frames with what the decoder actually holds.
  Frames next(bt.end() - 5, bt.end());
  next.insert(next.begin(), 0x42);
  EXPECT_EQ(round_trip(e, d, next, 2).frames, next);
}

}  // namespace
}  // namespace memloupe::reader::ctf
