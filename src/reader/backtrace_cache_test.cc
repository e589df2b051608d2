// The encoder resumes each backtrace's hash from the frames it shares with its
// thread bucket's previous one, the decoder from the frames shared with the
// previous explicit backtrace (docs/FORMAT.md §5.5); both must place every
// backtrace in the same cache slot, or a cached allocation reads another
// backtrace (or an empty slot). Streams of deep backtraces from several
// threads, interleaved, with shared prefixes: what is read equals what was written.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

#include "format/encoder.h"
#include "reader/reader.h"
#include "support/test_streams.h"

namespace memloupe::reader {
namespace {

using namespace format;

struct Written {
  uint64_t id;
  uint32_t thread;
  std::vector<uint64_t> backtrace;
};

// Each thread walks its own stack (a few frames popped and pushed between
// allocations, now and then a deep unwind); threads share their outer frames
// (one program) and switch every few allocations, so the thread buckets' and
// the decoder's previous backtraces differ.
//
// Hints (AllocRecord::prefix, as the recorder's staging ring gives them): none;
// right (each thread's backtraces numbered in turn, with the outer frames each
// shares with the thread's previous one); or with gaps in the numbering and
// frames counted as shared that are not, which the encoder must not believe.
enum class Hints { None, Right, Gaps };

size_t shared_outer(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[a.size() - 1 - i] == b[b.size() - 1 - i]) ++i;
  return i;
}

std::vector<uint8_t> encode(uint64_t seed, unsigned threads, size_t count, std::vector<Written>& written,
                            Hints hints = Hints::None) {
  std::vector<uint8_t> bytes(kMaxFileHeader);
  bytes.resize(encode_file_header(testing::test_header(Mode::All, false), bytes));
  testing::VectorSink sink(bytes);
  auto enc = std::make_unique<Encoder>(sink, Mode::All, Encoder::Options{.addresses = false, .columns = true});
  std::mt19937_64 rng(seed);
  const std::vector<uint64_t> root = {0x401000, 0x401100, 0x401200};
  std::vector<std::vector<uint64_t>> stacks(threads, root);  // outermost first
  std::vector<std::vector<uint64_t>> last(threads);          // each thread's previous backtrace
  std::vector<uint32_t> seq(threads, 0);
  uint32_t t = 0;
  std::vector<uint64_t> live;
  for (size_t k = 0; k < count; ++k) {
    if (rng() % 5 == 0) t = static_cast<uint32_t>(rng() % threads) * 9;  // buckets: t % 8
    auto& s = stacks[t / 9];
    const size_t pop = rng() % 20 == 0 ? rng() % s.size() : rng() % 4;
    s.resize(std::max(root.size(), s.size() - std::min(pop, s.size())));
    for (size_t push = rng() % 5; push > 0 && s.size() < 300; --push)
      s.push_back(0x500000 + 0x10 * (rng() % (rng() % 4 ? 40 : 4000)));
    std::vector<uint64_t> bt(s.rbegin(), s.rend());
    AllocRecord r;
    r.thread = ThreadId{t};
    r.time_ns = k * 1000;
    r.size = 16 + rng() % 4 * 16;
    r.backtrace = bt;
    const unsigned th = t / 9;
    if (hints != Hints::None) {
      const bool gap = hints == Hints::Gaps && k % 3 == 0;  // (not drawn: the stream stays the same)
      seq[th] += gap ? 2 : 1;
      const size_t shared = std::min<size_t>(shared_outer(bt, last[th]), kMaxFrames);
      r.prefix = {th + uintptr_t{1}, seq[th], static_cast<uint32_t>(gap ? bt.size() : shared)};
    }
    last[th] = bt;
    const AllocId id = enc->alloc(r);
    if (bt.size() > kMaxFrames) bt.resize(kMaxFrames);
    written.push_back({id.value, t, std::move(bt)});
    live.push_back(id.value);
    if (rng() % 2) {  // a random live block
      std::swap(live[rng() % live.size()], live.back());
      enc->free(AllocId{live.back()}, ThreadId{t}, k * 1000, Func::Free);
      live.pop_back();
    }
  }
  enc->trace_end(count * 1000, EndReason::Exit);
  return bytes;
}

TEST(BacktraceCache, InterleavedThreadsWithSharedPrefixesReadBack) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::vector<Written> written;
    const std::vector<uint8_t> bytes = encode(seed, 1 + seed % 4, 20000, written);
    auto r = Reader::from_bytes(bytes);
    ASSERT_TRUE(r.ok()) << r.error().message;
    size_t i = 0, cached = 0;  // read with no fresh frames: mostly from the cache
    while (const Event* e = (*r)->next()) {
      const auto* a = std::get_if<Alloc>(e);
      if (a == nullptr) continue;
      ASSERT_LT(i, written.size());
      EXPECT_EQ(a->id.value, written[i].id);
      EXPECT_EQ(a->thread.value, written[i].thread);
      ASSERT_EQ(std::vector<uint64_t>(a->backtrace.begin(), a->backtrace.end()), written[i].backtrace)
          << "seed " << seed << " alloc " << i;
      cached += (*r)->fresh_frames() == 0 && !a->backtrace.empty();
      ++i;
    }
    if (const auto& err = (*r)->error()) ADD_FAILURE() << err->message;
    EXPECT_EQ(i, written.size());
    // Both ways of reading a backtrace were exercised: from the cache, and written.
    EXPECT_GT(cached, written.size() / 20) << "seed " << seed;
    EXPECT_LT(cached, written.size()) << "seed " << seed;
  }
}

// The key's two memo words (BacktraceKey: the index's and the finaliser's
// addon's): zero when their slot is filled, distinct, and holding what a
// consumer wrote for as long as the slot holds that backtrace. The addon (the
// types) keeps its site there instead of reading the innermost frame.
TEST(BacktraceCache, KeysMemosLastUntilTheirSlotIsFilledAgain) {
  std::vector<Written> written;
  const std::vector<uint8_t> bytes = encode(7, 3, 20000, written);
  auto r = Reader::from_bytes(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::map<uint64_t, uint64_t> innermost;  // by serial: the filling's first frame
  size_t i = 0, remembered = 0;
  while (const Event* e = (*r)->next()) {
    const auto* a = std::get_if<Alloc>(e);
    if (a == nullptr || a->backtrace.empty()) continue;
    const BacktraceKey key = (*r)->backtrace_key();
    ASSERT_NE(key.serial, 0u);
    ASSERT_NE(key.memo, nullptr);
    ASSERT_NE(key.addon_memo, nullptr);
    ASSERT_NE(key.memo, key.addon_memo);
    const auto [it, filled] = innermost.try_emplace(key.serial, a->backtrace[0]);
    if (filled) {
      EXPECT_EQ(*key.memo, 0u) << "alloc " << i;
      EXPECT_EQ(*key.addon_memo, 0u) << "alloc " << i;
      *key.memo = static_cast<uint32_t>(key.serial);
      *key.addon_memo = static_cast<uint32_t>(key.serial * 3 + 1);
    } else {
      ++remembered;
      EXPECT_EQ(it->second, a->backtrace[0]) << "alloc " << i;
      EXPECT_EQ(*key.memo, static_cast<uint32_t>(key.serial)) << "alloc " << i;
      EXPECT_EQ(*key.addon_memo, static_cast<uint32_t>(key.serial * 3 + 1)) << "alloc " << i;
    }
    ++i;
  }
  if (const auto& err = (*r)->error()) ADD_FAILURE() << err->message;
  EXPECT_EQ(i, written.size());
  EXPECT_GT(remembered, written.size() / 20);
  EXPECT_LT(innermost.size(), written.size());
}

// alloc_key_view() (the finaliser's read) gives every Alloc's fresh frames
// and key as alloc_key() does: a native trace's reader hands out its
// decoder's own, current after each next(), not the scratch copy.
TEST(BacktraceCache, KeyViewIsTheAllocsKey) {
  std::vector<Written> written;
  const std::vector<uint8_t> bytes = encode(5, 3, 20000, written);
  auto r = Reader::from_bytes(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  size_t allocs = 0, cached = 0;
  while (const Event* e = (*r)->next()) {
    if (!std::holds_alternative<Alloc>(*e)) continue;
    uint32_t fresh = 0, view_fresh = 0;
    const BacktraceKey key = (*r)->alloc_key(fresh);
    BacktraceKey scratch;
    const BacktraceKey& view = (*r)->alloc_key_view(view_fresh, scratch);
    ASSERT_NE(&view, &scratch);
    EXPECT_EQ(view_fresh, fresh) << "alloc " << allocs;
    EXPECT_EQ(view.serial, key.serial) << "alloc " << allocs;
    EXPECT_EQ(view.slot, key.slot) << "alloc " << allocs;
    EXPECT_EQ(view.memo, key.memo) << "alloc " << allocs;
    EXPECT_EQ(view.addon_memo, key.addon_memo) << "alloc " << allocs;
    cached += fresh == 0;
    ++allocs;
  }
  EXPECT_EQ(allocs, written.size());
  EXPECT_GT(cached, 0u);
  EXPECT_LT(cached, allocs);
}

// A reader that keeps no key in one place: alloc_key_view() asks alloc_key().
TEST(BacktraceCache, KeyViewOfAReaderWithoutOneAsksAllocKey) {
  struct Keyed : Reader {
    format::TraceInfo info_;
    std::optional<Error> error_;
    SymbolTable symbols_;
    const format::TraceInfo& info() const override { return info_; }
    const Event* next() override { return nullptr; }
    const std::optional<Error>& error() const override { return error_; }
    uint32_t fresh_frames() const override { return 3; }
    BacktraceKey backtrace_key() const override { return {.serial = 9, .slot = 4}; }
    const SymbolTable& symbols() const override { return symbols_; }
    bool has_symbols_section() const override { return false; }
    uint64_t file_size() const override { return 0; }
    uint64_t offset() const override { return 0; }
    uint64_t events_read() const override { return 0; }
  } keyed;
  uint32_t fresh = 0;
  BacktraceKey scratch;
  const BacktraceKey& view = keyed.alloc_key_view(fresh, scratch);
  EXPECT_EQ(&view, &scratch);
  EXPECT_EQ(fresh, 3u);
  EXPECT_EQ(view.serial, 9u);
  EXPECT_EQ(view.slot, 4u);
}

// The encoder takes a caller's count of shared frames when it counts from the
// backtrace the encoder hashed last for that thread, else compares: the bytes
// are the same either way.
TEST(BacktraceCache, SharedPrefixHintsChangeNoByte) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::vector<Written> w0, w1, w2;
    const std::vector<uint8_t> plain = encode(seed, 1 + seed % 4, 20000, w0, Hints::None);
    EXPECT_EQ(encode(seed, 1 + seed % 4, 20000, w1, Hints::Right), plain) << "seed " << seed;
    EXPECT_EQ(encode(seed, 1 + seed % 4, 20000, w2, Hints::Gaps), plain) << "seed " << seed;
  }
}

}  // namespace
}  // namespace memloupe::reader
