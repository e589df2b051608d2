// The encoder's output is part of the format: a change that makes it faster
// must not change one byte. This test encodes long deterministic event streams
// (both modes, every address form and reference kind, recycled addresses,
// reallocs, thread switches, cache evictions, the window wrapping many times)
// and compares a CRC-32C of the bytes with the value the encoder produced when
// the format was frozen. If it fails after a format change that is meant to
// happen, the format version must change too (docs/FORMAT.md).
//
// The values are version 4's (block references from three landmarks per thread
// over a 2^20-allocation window: 1.5% fewer bytes on these streams). Versions 2
// and 3's, for the record: 2842574 B / 981371873, 1986055 / 1976898655, 1984775 /
// 3383640331, 1023445 / 1085803726 (version 2 folded the backtrace hash
// outermost first: the same byte counts as version 1, other slot words).
// Version 1's CRCs: 392136547, 1205730290, 1712839652, 3053249406; version-1
// traces are kept for reading in tests/data/v1.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "format/crc32c.h"
#include "format/encoder.h"
#include "format/history.h"

namespace memloupe::format {
namespace {

// splitmix64: fixed sequence on every platform (std distributions are not).
class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed) {}
  uint64_t next() {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return next() % n; }

 private:
  uint64_t s_;
};

class CrcSink final : public ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override {
    crc = crc32c(c.data(), c.size(), crc);
    bytes += c.size();
  }
  uint32_t crc = 0;
  uint64_t bytes = 0;
};

struct Block {
  uint64_t id;
  uint64_t address;
  uint64_t size;
  Func func;
};

// A program model small enough to read: call sites with shared prefixes, an
// allocator with per-thread, per-class LIFO free lists and a bump pointer, and
// lifetimes from immediate to longer than the history window.
class Stream {
 public:
  // What the stream exercised, from a second AllocHistory that follows the
  // encoder's: proof that the checksum covers every reference kind and form.
  struct Coverage {
    uint64_t ref_kind[8] = {};
    uint64_t freed_first = 0, freed_nth = 0, not_freed = 0;
  };

  Stream(Mode mode, uint64_t seed) : mode_(mode), rng_(seed) {
    for (unsigned s = 0; s < kSites; ++s) {
      std::vector<uint64_t> bt;
      const unsigned depth = s == 0 ? 0 : s == 1 ? 300 : 1 + static_cast<unsigned>(rng_.below(70));
      // Outer frames come from a small pool so that prefixes repeat.
      for (unsigned i = 0; i < depth; ++i)
        bt.push_back(0x400000 + 0x40 * rng_.below(i < depth / 2 ? 40 : 2000) + i % 7);
      sites_.push_back(std::move(bt));
    }
  }

  const Coverage& coverage() const { return cov_; }

  void run(Encoder& enc, uint64_t events) {
    for (uint64_t e = 0; e < events; ++e) {
      now_ += rng_.below(10) == 0 ? rng_.below(100000) : rng_.below(400);
      const uint64_t t = rng_.below(50) == 0 ? now_ - rng_.below(5000) : now_;  // inversions
      if (rng_.below(8) == 0) thread_ = rng_.below(20) == 0 ? 40 + rng_.below(3) : rng_.below(5);
      const uint64_t r = rng_.below(100);
      if (r < 3) {
        enc.rss(t, rng_.next() >> 20);
      } else if (r < 50 || live_.empty()) {
        alloc(enc, t, nullptr);
      } else if (r < 55) {
        Block old = take();
        release(old);
        alloc(enc, t, &old);
      } else {
        Block b = take();
        release(b);
        const Func f = rng_.below(20) == 0 ? Func::Free : free_func(b.func);
        follow_free(b.id, f, false);
        enc.free(AllocId{b.id}, ThreadId{static_cast<uint32_t>(thread_)}, t, f);
      }
    }
    while (!live_.empty()) {
      Block b = take();
      enc.free(AllocId{b.id}, ThreadId{static_cast<uint32_t>(thread_)}, now_, free_func(b.func));
    }
    enc.trace_end(now_, EndReason::Exit);
  }

 private:
  static constexpr unsigned kSites = 120;

  static Func free_func(Func a) {
    return a == Func::New ? Func::DeleteSized : a == Func::NewArray ? Func::DeleteArray : Func::Free;
  }

  uint64_t pick_size() {
    const uint64_t r = rng_.below(100);
    if (r < 60) return 16 * (1 + rng_.below(8));
    if (r < 85) return rng_.below(1100);
    if (r < 99) return rng_.below(1 << 20);
    return rng_.next() >> rng_.below(64);
  }

  // Mostly the newest blocks (LIFO), some the oldest (FIFO), some at random.
  Block take() {
    const uint64_t r = rng_.below(10), n = live_.size();
    const size_t i = r < 6 ? n - 1 - rng_.below(n < 8 ? n : 8) : r < 8 ? rng_.below(n < 4 ? n : 4)
                                                                       : rng_.below(n);
    Block b = live_[i];
    live_.erase(live_.begin() + static_cast<ptrdiff_t>(i));
    return b;
  }

  void follow_free(uint64_t id, Func f, bool realloc) {
    ++cov_.ref_kind[mirror_->block_ref(id, next_id_, tid()) & 7];
    mirror_->on_free(id, next_id_, f, realloc, tid());
  }
  void follow_alloc(const AllocRecord& r) {
    if (mode_ == Mode::All) {
      const unsigned k = mirror_->freed_index(r.size, tid(), r.address);
      ++(k == 0 ? cov_.freed_first : k == AllocHistory::kNone ? cov_.not_freed : cov_.freed_nth);
    }
    mirror_->on_alloc(next_id_++, r.size, r.address, r.func, tid());
  }
  uint32_t tid() const { return static_cast<uint32_t>(thread_); }

  void release(const Block& b) {
    if (b.address) lists_[list_of(b.size)].push_back(b.address);
  }
  size_t list_of(uint64_t size) const { return thread_ % 8 * kSizeClasses + size_class(size); }

  void alloc(Encoder& enc, uint64_t t, const Block* old) {
    const unsigned site = rng_.below(3) == 0 ? last_site_ : static_cast<unsigned>(rng_.below(kSites));
    last_site_ = site;
    AllocRecord r;
    r.thread = ThreadId{static_cast<uint32_t>(thread_)};
    r.time_ns = t;
    r.size = site % 5 == 0 ? 48 : pick_size();
    const uint64_t f = rng_.below(20);
    r.func = f < 12 ? Func::New : f < 16 ? Func::Malloc : f < 18 ? Func::NewArray : Func::PosixMemalign;
    if (r.func == Func::PosixMemalign) r.alignment = 16u << rng_.below(8);
    r.n_samples = mode_ == Mode::All || rng_.below(4) ? 1 : 1 + static_cast<uint32_t>(rng_.below(300));
    r.backtrace = sites_[site];
    if (mode_ == Mode::All && rng_.below(500) != 0) {  // address 0: a failed allocation
      auto& list = lists_[list_of(r.size)];
      if (!list.empty() && rng_.below(10) != 0) {
        r.address = list[list.size() - 1 - rng_.below(list.size() < 3 ? list.size() : 3)];
        std::erase(list, r.address);
      } else {
        r.address = bump_;
        bump_ += (r.size + 8 + 15) & ~uint64_t{15};
      }
    }
    if (old) follow_free(old->id, Func::Realloc, true);
    follow_alloc(r);
    const AllocId id = old ? enc.realloc(AllocId{old->id}, r) : enc.alloc(r);
    live_.push_back({id.value, r.address, r.size, r.func});
  }

  Mode mode_;
  Rng rng_;
  std::vector<std::vector<uint64_t>> sites_;
  std::vector<Block> live_;
  std::vector<std::vector<uint64_t>> lists_ = std::vector<std::vector<uint64_t>>(8 * kSizeClasses);
  uint64_t bump_ = 0x5555'5576'a000ull;
  uint64_t now_ = 1'000'000;
  uint64_t thread_ = 0;
  unsigned last_site_ = 0;
  std::unique_ptr<AllocHistory> mirror_ = std::make_unique<AllocHistory>();
  uint64_t next_id_ = 0;
  Coverage cov_;
};

CrcSink encode_stream(Mode mode, uint64_t seed, uint64_t events, Encoder::Options options = {}) {
  CrcSink sink;
  auto enc = std::make_unique<Encoder>(sink, mode, options);
  Stream stream(mode, seed);
  stream.run(*enc, events);
  const Stream::Coverage& c = stream.coverage();
  for (unsigned k = 0; k < 8; ++k) EXPECT_GT(c.ref_kind[k], 100u) << "reference kind " << k;
  if (mode == Mode::All) {
    EXPECT_GT(c.freed_first, 1000u);
    EXPECT_GT(c.freed_nth, 1000u);
    EXPECT_GT(c.not_freed, 1000u);
  }
  return sink;
}

TEST(EncoderGolden, AllModeBytesAreFrozen) {
  const CrcSink s = encode_stream(Mode::All, 7, 400'000);
  EXPECT_EQ(s.bytes, 2798650u);
  EXPECT_EQ(s.crc, 3399543809u);
}

// The recorder's default --all form (header mode byte 2): the same stream
// without address fields or address-form bits.
TEST(EncoderGolden, AllModeWithoutAddressesBytesAreFrozen) {
  const CrcSink s = encode_stream(Mode::All, 7, 400'000, {.addresses = false});
  EXPECT_EQ(s.bytes, 1942131u);  // 2798650 with addresses
  EXPECT_EQ(s.crc, 369584650u);
}

// What the recorder writes: the address-free stream in column chunks (the same
// fields as above, regrouped by stream; RoundTrip.DirectColumnsEqualCompactedRows
// checks them against the finaliser's regrouping of the rows).
TEST(EncoderGolden, ColumnFormBytesAreFrozen) {
  const CrcSink s = encode_stream(Mode::All, 7, 400'000, {.addresses = false, .columns = true});
  // (version 3: 1984956 bytes in more chunks when each stream's buffer was 128 KiB, not 512;
  // version 4, before the lanes: 1940891 bytes, CRC 4071154701. The stream's eight
  // threads take a lane each: every lane's first event of a chunk has its
  // ThreadSwitch, and the order stream holds a varint per run.)
  EXPECT_EQ(s.bytes, 1945586u);
  EXPECT_EQ(s.crc, 3906446212u);
}

TEST(EncoderGolden, SampledModeBytesAreFrozen) {
  const CrcSink s = encode_stream(Mode::Sampled, 8, 200'000);
  EXPECT_EQ(s.bytes, 1006191u);
  EXPECT_EQ(s.crc, 3475558673u);
}

// The recorder's encoder is constant-initialised in static storage and its first
// session only start()s it, trusting that a new encoder is all zero bytes
// (encoder_state.h): a member initialised to anything else shows up here.
TEST(EncoderStatic, ANewEncoderIsAllZeroBytes) {
  static constinit Encoder fresh;
  const auto* bytes = reinterpret_cast<const unsigned char*>(&fresh);
  size_t non_zero = 0;
  for (size_t i = 0; i < sizeof(fresh); ++i) non_zero += bytes[i] != 0;
  EXPECT_EQ(non_zero, 0u);
}

// A fork child's trace starts from a reset() encoder: it must write what a new
// one writes, after a stream that filled every table.
TEST(EncoderStatic, StartedAndResetEncodersWriteWhatANewOneWrites) {
  constexpr uint64_t kEvents = 60'000;
  const CrcSink expected = encode_stream(Mode::All, 7, kEvents);
  static constinit Encoder enc;
  for (int session = 0; session < 2; ++session) {
    CrcSink sink;
    enc.start(sink, Mode::All);
    Stream(Mode::All, 7).run(enc, kEvents);
    EXPECT_EQ(sink.bytes, expected.bytes) << "session " << session;
    EXPECT_EQ(sink.crc, expected.crc) << "session " << session;
    enc.reset();
  }
}

// The encoder measures the open chunk's room once per many events, counting
// kMaxEvent bytes for each allocation and kReserve for each Ext event
// (State::room): a chunk never outgrows its buffer, whatever the mix. Row
// form (64 KiB chunks): deep allocations of fresh frames (~3 KB each, near
// kMaxEvent) among module loads of the longest path and build id (~4.2 KB,
// more than kMaxEvent: counted as allocations, a run of them overran the
// buffer).
TEST(EncoderRoom, ChunksNeverOutgrowTheirBufferWithDeepAllocationsAndLongExtEvents) {
  struct SizeSink final : ChunkSink {
    void write_chunk(std::span<const uint8_t> c) noexcept override {
      largest = std::max(largest, c.size());
      ++chunks;
    }
    size_t largest = 0;
    size_t chunks = 0;
  } sink;
  auto enc = std::make_unique<Encoder>(sink, Mode::All, Encoder::Options{.addresses = false});
  const std::string path(kMaxString, 'p');
  const std::vector<uint8_t> build_id(kMaxBuildId, 0xb1);
  Rng rng(5);
  std::vector<uint64_t> frames(kMaxFrames);
  uint64_t t = 1'000'000;
  for (int round = 0; round < 300; ++round) {
    const uint64_t deep = rng.below(4);
    for (uint64_t k = 0; k < deep; ++k) {
      for (uint64_t& f : frames) f = 0x7f00'0000'0000ull + (rng.next() >> 20);
      AllocRecord r;
      r.time_ns = t += 1000;
      r.size = 32;
      r.backtrace = frames;
      enc->alloc(r);
    }
    const uint64_t loads = rng.below(24);
    for (uint64_t k = 0; k < loads; ++k)
      enc->module_load({.time_ns = t += 1000, .start = 0x1000 * k, .end = 0x1000 * k + 0x800, .path = path,
                        .build_id = build_id});
  }
  enc->flush();
  EXPECT_GT(sink.chunks, 100u);
  EXPECT_LE(sink.largest, kChunkHeaderSize + kChunkPayload);
}

// The open chunk's sure room is the only test most events make (State::begin):
// a chunk sealed by flush() with room counted for many more events must leave
// none counted, or the next event is written into the sealed chunk's buffers
// without a chunk being opened, and lost. Both forms.
TEST(EncoderRoom, AnEventAfterAFlushOpensAChunkOfItsOwn) {
  for (const bool columns : {false, true}) {
    struct CountSink final : ChunkSink {
      void write_chunk(std::span<const uint8_t>) noexcept override { ++chunks; }
      size_t chunks = 0;
    } sink;
    auto enc = std::make_unique<Encoder>(sink, Mode::All, Encoder::Options{.columns = columns});
    const std::vector<uint64_t> frames = {0x401000, 0x402000, 0x403000};
    uint64_t t = 1'000'000;
    const auto alloc = [&](uint64_t address) {
      AllocRecord r;
      r.time_ns = t += 1000;
      r.size = 48;
      r.address = address;
      r.backtrace = frames;
      enc->alloc(r);
    };
    for (uint64_t k = 0; k < 10; ++k) alloc(0x10000 + 64 * k);  // room counted for more events than these
    enc->flush();
    EXPECT_EQ(sink.chunks, 1u) << "columns " << columns;
    alloc(0x20000);
    enc->flush();
    EXPECT_EQ(sink.chunks, 2u) << "columns " << columns;
    EXPECT_EQ(enc->next_id().value, 11u);
  }
}

}  // namespace
}  // namespace memloupe::format
