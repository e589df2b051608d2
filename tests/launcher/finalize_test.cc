// The finaliser on raw traces written with the real Encoder, holding real
// return addresses of this test program.
#include "finalize/finalize.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <chrono>
#include <fstream>
#include <thread>
#include <type_traits>

#include "analysis/index.h"
#include "finalize/follow.h"
#include "format/snapshot_wire.h"
#include "markers.h"
#include "process.h"
#include "reader/bytes.h"
#include "reader/chunk_io.h"
#include "reader/growing_file.h"
#include "reader/reader.h"
#include "reader/snapshot_decoder.h"
#include "sites.h"
#include "symbolize/loaded_modules.h"
#include "trace_builder.h"

namespace memloupe::finalize {
namespace {

using symbolize::loaded_module_at;
using symbolize::loaded_modules;
using symbolize::Module;
using testing::marker_line;
using testing::TempDir;
using testing::TraceBuilder;

struct Sites {
  uint64_t widgets = 0;  // return address into build_widgets (an inlined call)
  uint64_t c = 0;        // return address into c_allocate
};

Sites capture_sites() {
  const memloupe_testprog::Capture a = memloupe_testprog::build_widgets(2);
  memloupe_testprog::Capture b;
  memloupe_testprog::c_allocate(3, &b);
  ::operator delete(a.block);
  ::operator delete(b.block);
  return {a.return_address, b.return_address};
}

std::unique_ptr<reader::Reader> open_or_fail(const std::string& path) {
  auto r = reader::Reader::open(path);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  return r ? std::move(*r) : nullptr;
}

// Events of a whole file; the reader's error (if any) in `error`.
uint64_t count_events(reader::Reader& r) {
  uint64_t n = 0;
  while (const format::Event* e = r.next()) n += !std::holds_alternative<format::SymbolDef>(*e);
  return n;
}

TEST(Finalize, EmbedsSymbolsOfEveryBacktraceAddress) {
  const Sites sites = capture_sites();
  TraceBuilder trace;
  for (const Module& m : loaded_modules()) trace.module_load(m);
  trace.alloc({sites.widgets, sites.c}, 100, 10);
  trace.alloc({sites.c}, 200, 20);
  trace.end(30);
  trace.flush();
  TempDir dir;
  trace.write(dir / "raw.trace");

  auto stats = finalize_trace(dir / "raw.trace", dir / "final.trace", {});
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->events, trace.events());
  EXPECT_EQ(stats->addresses, 2u);
  EXPECT_EQ(stats->symbolized, 2u);
  EXPECT_FALSE(stats->damage);
  EXPECT_EQ(stats->output_bytes, std::filesystem::file_size(dir / "final.trace"));

  auto r = open_or_fail(dir / "final.trace");
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_symbols_section());
  EXPECT_EQ(r->info().pid, 4242u);
  EXPECT_EQ(count_events(*r), trace.events());
  EXPECT_FALSE(r->error());
  const auto& widgets = r->symbols().at(sites.widgets);
  ASSERT_EQ(widgets.size(), 2u);
  EXPECT_EQ(widgets[0].function, "memloupe_testprog::Builder<memloupe_testprog::Widget>::make(unsigned long)");
  EXPECT_EQ(widgets[0].line, static_cast<uint32_t>(marker_line("inlined-call")));
  EXPECT_EQ(std::filesystem::path(widgets[0].file).filename(), "sites.cc");
  EXPECT_EQ(widgets[1].function, "memloupe_testprog::build_widgets(unsigned long)");
  EXPECT_EQ(widgets[1].line, static_cast<uint32_t>(marker_line("outer-call")));
  const auto& c = r->symbols().at(sites.c);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].function, "c_allocate");
  EXPECT_EQ(c[0].line, static_cast<uint32_t>(marker_line("c-call")));

  // The raw (uncompressed) events are stored zstd-compressed now, in either form.
  const std::string bytes = testing::read_file(dir / "final.trace");
  const reader::ChunkList chunks = reader::scan_chunks(
      {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  int events_chunks = 0;
  for (const reader::ChunkView& chunk : chunks.chunks) {
    if (chunk.type == static_cast<uint8_t>(format::ChunkType::Events) ||
        chunk.type == static_cast<uint8_t>(format::ChunkType::EventsColumns)) {
      ++events_chunks;
      EXPECT_TRUE(chunk.flags & format::kChunkZstd) << "chunk at " << chunk.offset;
    }
  }
  EXPECT_GT(events_chunks, 0);
}

TEST(Finalize, TruncatedTraceKeepsEveryCompleteChunk) {
  const Sites sites = capture_sites();
  TraceBuilder trace;
  for (const Module& m : loaded_modules()) trace.module_load(m);
  trace.flush();
  uint64_t complete = trace.events();
  constexpr int kChunks = 5, kPerChunk = 10;
  for (int chunk = 0; chunk < kChunks; ++chunk) {
    for (int i = 0; i < kPerChunk; ++i) trace.alloc({sites.widgets, sites.c}, 64 + i, 100 * chunk + i);
    trace.flush();
    if (chunk < kChunks - 1) complete = trace.events();
  }
  // Cut the last chunk in half, as a SIGKILL during its write would.
  const size_t last_start = trace.chunk_ends()[trace.chunk_ends().size() - 2];
  const size_t cut = (last_start + trace.bytes().size()) / 2;
  TempDir dir;
  trace.write(dir / "raw.trace");
  std::filesystem::resize_file(dir / "raw.trace", cut);

  auto stats = finalize_trace(dir / "raw.trace", dir / "raw.trace", {});
  ASSERT_TRUE(stats) << stats.error().message;
  ASSERT_TRUE(stats->damage);
  EXPECT_EQ(stats->damage->offset, last_start) << stats->damage->message;
  EXPECT_EQ(stats->events, complete);

  auto r = open_or_fail(dir / "raw.trace");
  ASSERT_TRUE(r);
  EXPECT_EQ(count_events(*r), complete);
  EXPECT_FALSE(r->error()) << r->error()->message;  // the finalised file is whole
  EXPECT_EQ(r->symbols().count(sites.widgets), 1u);
}

// Counts what the finaliser hands its tap.
class CountingTap : public FinalizeTap {
 public:
  void begin(const format::TraceInfo&) override {}
  void event(const format::Event&) override { ++events; }
  void events_over() override { ++overs; }
  std::optional<std::vector<uint8_t>> index(std::span<const uint8_t>) override {
    asked = true;
    return std::vector<uint8_t>{1, 2, 3};
  }
  uint64_t events = 0, overs = 0;
  bool asked = false;
};

// The analysis index is compressed at level 3 whatever the options' level
// (finalize.cc, after_exit_level: it is made serially after the program's
// exit; (b)'s took 4.3 ms at 6, 2.0 at 3): its stored chunk is its payload's
// level-3 frame, not the options' level-6 one.
TEST(Finalize, CompressesTheIndexAtLevel3) {
  // Varied enough that levels 3 and 6 make different frames (asserted).
  std::vector<uint8_t> payload;
  uint64_t x = 88172645463325252u;
  for (int i = 0; i < 200000; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    payload.push_back(static_cast<uint8_t>(i % 97 < 60 ? i % 13 : x % 11));
  }
  std::vector<uint8_t> level_3, level_6;
  reader::append_chunk_compressed(level_3, format::ChunkType::AnalysisIndex, payload, 3);
  reader::append_chunk_compressed(level_6, format::ChunkType::AnalysisIndex, payload, 6);
  ASSERT_NE(level_3, level_6);

  struct FixedIndexTap : FinalizeTap {
    void begin(const format::TraceInfo&) override {}
    void event(const format::Event&) override {}
    void events_over() override {}
    std::optional<std::vector<uint8_t>> index(std::span<const uint8_t>) override { return index_bytes; }
    std::vector<uint8_t> index_bytes;
  } tap;
  tap.index_bytes = payload;
  const Sites sites = capture_sites();
  TraceBuilder trace(format::Mode::All);
  for (const Module& m : loaded_modules()) trace.module_load(m);
  trace.alloc({sites.widgets, sites.c}, 64, 10);
  trace.end(1000);
  TempDir dir;
  trace.write(dir / "raw.trace");
  auto stats = finalize_trace(dir / "raw.trace", dir / "out.trace", {.zstd_level = 6, .tap = &tap});
  ASSERT_TRUE(stats) << stats.error().message;
  auto out = reader::Bytes::map_file(dir / "out.trace");
  ASSERT_TRUE(out);
  const std::span<const uint8_t> file = (*out)->data();
  ASSERT_GE(file.size(), level_3.size());
  EXPECT_TRUE(std::ranges::equal(file.subspan(file.size() - level_3.size()), level_3));
  EXPECT_EQ(stats->index_bytes, level_3.size());
}

// A raw trace whose chunks are all intact is compacted and collected in one
// read. Damage the decoder finds inside such a chunk (its CRC recomputed) must
// be reported as a Reader reports it, with the events before it kept and
// counted as a Reader counts them, and no index.
TEST(Finalize, DamageInsideAnIntactChunkIsReportedAsAReaderReportsIt) {
  const Sites sites = capture_sites();
  TraceBuilder trace(format::Mode::All);
  for (const Module& m : loaded_modules()) trace.module_load(m);
  trace.flush();
  for (int chunk = 0; chunk < 4; ++chunk) {
    for (int i = 0; i < 10; ++i) trace.alloc({sites.widgets, sites.c}, 64 + i, 100 * chunk + i);
    trace.flush();
  }
  TempDir dir;
  trace.write(dir / "whole.trace");
  CountingTap whole_tap;
  auto whole = finalize_trace(dir / "whole.trace", dir / "whole.out", {.tap = &whole_tap});
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_FALSE(whole->damage);
  EXPECT_EQ(whole->events, trace.events());
  EXPECT_EQ(whole_tap.events, trace.events());
  EXPECT_EQ(whole_tap.overs, 1u);
  EXPECT_TRUE(whole_tap.asked);

  // The third events chunk's first event code becomes 7 (there is none).
  const reader::ChunkList list = reader::scan_chunks(trace.bytes());
  ASSERT_FALSE(list.error);
  ASSERT_GE(list.chunks.size(), 5u);
  std::vector<uint8_t> damaged(trace.bytes().begin(), trace.bytes().begin() + format::kPrologueSize);
  for (size_t i = 0; i < list.chunks.size(); ++i) {
    const reader::ChunkView& c = list.chunks[i];
    ASSERT_EQ(c.flags, 0);
    std::vector<uint8_t> payload(c.stored.begin(), c.stored.end());
    if (i == 4) payload.at(16) = 0xff;  // after the start time and alloc-id base
    format::append_chunk(damaged, static_cast<format::ChunkType>(c.type), payload);
  }
  {
    std::ofstream out(dir / "damaged.trace", std::ios::binary);
    out.write(reinterpret_cast<const char*>(damaged.data()), static_cast<std::streamsize>(damaged.size()));
  }
  auto r = open_or_fail(dir / "damaged.trace");
  ASSERT_TRUE(r);
  const uint64_t readable = count_events(*r);
  ASSERT_TRUE(r->error());
  EXPECT_LT(readable, trace.events());

  CountingTap tap;
  auto stats = finalize_trace(dir / "damaged.trace", dir / "damaged.out", {.tap = &tap});
  ASSERT_TRUE(stats) << stats.error().message;
  ASSERT_TRUE(stats->damage);
  EXPECT_EQ(stats->damage->message, r->error()->message);
  EXPECT_EQ(stats->damage->offset, r->error()->offset);
  EXPECT_EQ(stats->events, readable);
  EXPECT_EQ(tap.events, readable);
  EXPECT_EQ(tap.overs, 0u);
  EXPECT_FALSE(tap.asked);
  EXPECT_EQ(stats->index_bytes, 0u);
  auto out = open_or_fail(dir / "damaged.out");
  ASSERT_TRUE(out);
  EXPECT_EQ(count_events(*out), readable);
  EXPECT_FALSE(out->error());
}

// A tap that takes Allocs and Frees apart (FinalizeTap::alloc_event,
// free_event, as the CLI's index tap does) is given each of them that way, as
// the event's own Alloc or Free, and the other kinds through keyed_event; a
// tap that does not (CountingTap above) sees them all through event().
class KindsTap : public FinalizeTap {
 public:
  void begin(const format::TraceInfo&) override {}
  void event(const format::Event&) override { ADD_FAILURE() << "keyed_event() is overridden"; }
  void keyed_event(const format::Event& e, const reader::BacktraceKey&) override {
    EXPECT_FALSE(std::holds_alternative<format::Alloc>(e) || std::holds_alternative<format::Free>(e));
    ++others;
  }
  void alloc_event(const format::Event& e, const format::Alloc& a, const reader::BacktraceKey&) override {
    EXPECT_EQ(std::get_if<format::Alloc>(&e), &a);
    sizes += a.size;
    ++allocs;
  }
  void free_event(const format::Event& e, const format::Free& f) override {
    EXPECT_EQ(std::get_if<format::Free>(&e), &f);
    ++frees;
  }
  void events_over() override {}
  std::optional<std::vector<uint8_t>> index(std::span<const uint8_t>) override { return std::nullopt; }
  uint64_t allocs = 0, frees = 0, others = 0, sizes = 0;
};

TEST(Finalize, AllocsAndFreesReachTheTapAsThemselves) {
  const Sites sites = capture_sites();
  TraceBuilder trace(format::Mode::All);
  for (const Module& m : loaded_modules()) trace.module_load(m);
  uint64_t sizes = 0;
  for (int i = 0; i < 20; ++i) {
    const format::AllocId id = trace.alloc({sites.widgets, sites.c}, 64 + i, 10 * i);
    sizes += 64 + i;
    if (i % 2) trace.free(id, 10 * i + 5);
  }
  trace.end(1000);
  TempDir dir;
  trace.write(dir / "kinds.trace");
  KindsTap tap;
  auto stats = finalize_trace(dir / "kinds.trace", dir / "kinds.out", {.tap = &tap});
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(tap.allocs, 20u);
  EXPECT_EQ(tap.frees, 10u);
  EXPECT_EQ(tap.sizes, sizes);
  EXPECT_EQ(tap.allocs + tap.frees + tap.others, trace.events());
  EXPECT_GT(tap.others, 0u);  // the module loads and the end
}

// The analysis index's tap (as the CLI's): the index built as the events come,
// and the blocks still live at the end for the snapshots' annex.
class IndexingTap : public FinalizeTap {
 public:
  void begin(const format::TraceInfo& info) override { builder_ = std::make_unique<analysis::IndexBuilder>(info); }
  void event(const format::Event& e) override {
    ++events;
    builder_->add(e);
  }
  void events_over() override {
    ++overs;
    builder_->events_over();
  }
  std::optional<std::vector<uint8_t>> index(std::span<const uint8_t> trace) override {
    asked = true;
    return builder_->finish(trace);
  }
  bool live_blocks(const LiveBlockFn& fn) const override {
    ++live_asks;
    live_given = builder_->for_each_live(fn);
    return live_given;
  }
  uint64_t events = 0, overs = 0;
  bool asked = false;
  mutable int live_asks = 0;
  mutable bool live_given = false;

 private:
  std::unique_ptr<analysis::IndexBuilder> builder_;
};

enum class Extras : uint8_t;
void expect_annexed(const std::string& path, const IndexingTap& followed_tap, const Sites& sites, Extras extras);

// What the followed trace holds beside its allocations.
enum class Extras : uint8_t {
  None,
  // Frees, thread names, the analysis index and an at-exit snapshot of the
  // blocks still live: its annex comes from the index's live blocks.
  ExitSnapshot,
  // Also an earlier snapshot holding a block freed after it: the annex needs
  // one more read of the events for it.
  EarlierSnapshot,
};

// The trace written piece by piece while a TraceFollower reads it (a chunk's
// first half, a pause, its second half, as a recorder's writes may land), then
// finalised with the follower's read: the same file, byte for byte, and the
// same counts and damage, as finalising the finished file by itself. `cut`:
// the last chunk is cut in half, as a SIGKILL during its write leaves it.
template <class Tap>
void expect_following_changes_nothing(bool cut, Extras extras = Extras::None) {
  const Sites sites = capture_sites();
  TraceBuilder trace(format::Mode::All);
  for (const Module& m : loaded_modules()) trace.module_load(m);
  if (extras != Extras::None) trace.thread(format::ThreadId{0}, 0, 4242, "main");
  trace.flush();
  std::vector<format::AllocId> live, freed_later;
  for (int chunk = 0; chunk < 6; ++chunk) {
    for (int i = 0; i < 40; ++i) {
      const auto t = static_cast<uint64_t>(100 * chunk + i);
      const format::AllocId id = trace.alloc({sites.widgets, sites.c, 0x1000u + static_cast<uint64_t>(i)}, 64 + i, t);
      if (extras == Extras::None) continue;
      if (i % 3 == 0) {
        trace.free(id, t);
      } else {
        live.push_back(id);
      }
    }
    trace.flush();
  }
  if (extras == Extras::EarlierSnapshot) {
    trace.snapshot(0, false, live, 700);
    freed_later = {live.front()};
    trace.free(live.front(), 701);
    live.erase(live.begin());
  }
  if (!cut) {
    trace.end(10000);
    trace.flush();
    if (extras != Extras::None) trace.snapshot(extras == Extras::EarlierSnapshot ? 1 : 0, true, live, 10000);
  }
  std::vector<uint8_t> bytes = trace.bytes();
  if (cut) {
    const size_t last_start = trace.chunk_ends()[trace.chunk_ends().size() - 2];
    bytes.resize((last_start + bytes.size()) / 2);
  }
  TempDir dir;
  const std::string path = dir / "followed.trace";
  Tap followed_tap;
  FinalizeOptions followed_options{.tap = &followed_tap};
  TraceFollower follower(path, followed_options, [&path] { return std::filesystem::exists(path); });
  std::this_thread::sleep_for(std::chrono::milliseconds(30));  // it waits for the file
  {
    std::ofstream out(path, std::ios::binary);
    size_t at = 0;
    for (size_t end : trace.chunk_ends()) {
      end = std::min(end, bytes.size());
      if (end <= at) continue;
      const size_t half = at + (end - at) / 2;
      for (size_t to : {half, end}) {
        out.write(reinterpret_cast<const char*>(bytes.data() + at), static_cast<std::streamsize>(to - at));
        out.flush();
        at = to;
        std::this_thread::sleep_for(std::chrono::milliseconds(25));
      }
    }
  }
  Expected<FollowedRead> read = follower.finish();
  ASSERT_TRUE(read) << read.error().message;
  auto followed = finalize_trace(path, dir / "followed.out", followed_options, &*read);
  ASSERT_TRUE(followed) << followed.error().message;

  Tap tap;
  auto alone = finalize_trace(path, dir / "alone.out", {.tap = &tap});
  ASSERT_TRUE(alone) << alone.error().message;
  EXPECT_EQ(followed->events, alone->events);
  EXPECT_EQ(followed->addresses, alone->addresses);
  EXPECT_EQ(followed_tap.events, tap.events);
  EXPECT_EQ(followed_tap.overs, tap.overs);
  EXPECT_EQ(followed_tap.asked, tap.asked);
  ASSERT_EQ(followed->damage.has_value(), cut);
  ASSERT_EQ(alone->damage.has_value(), cut);
  if (cut) {
    EXPECT_EQ(followed->damage->message, alone->damage->message);
    EXPECT_EQ(followed->damage->offset, alone->damage->offset);
  } else {
    EXPECT_EQ(followed->events, trace.events());
  }
  auto read_file = [](const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), {});
  };
  const std::vector<char> want = read_file(dir / "alone.out");
  ASSERT_GT(want.size(), bytes.size() / 4);
  EXPECT_TRUE(read_file(dir / "followed.out") == want);
  if constexpr (std::is_same_v<Tap, IndexingTap>) {
    if (extras != Extras::None) expect_annexed(dir / "followed.out", followed_tap, sites, extras);
  }
}

// The annex names every block with its Alloc's size and stack, and the thread.
void expect_annexed(const std::string& path, const IndexingTap& followed_tap, const Sites& sites, Extras extras) {
  ASSERT_EQ(followed_tap.live_asks, 1);
  ASSERT_TRUE(followed_tap.live_given);  // (the earlier snapshot's block is then read for)
  ASSERT_TRUE(followed_tap.asked);
  auto out = reader::Bytes::map_file(path);
  ASSERT_TRUE(out);
  const reader::RawSnapshots snaps = reader::decode_snapshots((*out)->data());
  ASSERT_EQ(snaps.snapshots.size(), extras == Extras::EarlierSnapshot ? 2u : 1u) << snaps.damage;
  for (const reader::RawSnapshot& s : snaps.snapshots) {
    ASSERT_TRUE(s.annexed);
    ASSERT_EQ(s.sites.size(), s.blocks.size());
    for (const reader::RawSnapshotSite& site : s.sites) {
      ASSERT_NE(site.stack_plus_one, 0u);
      ASSERT_LE(site.stack_plus_one, s.stacks.size());
      const std::vector<uint64_t>& stack = s.stacks[site.stack_plus_one - 1];
      ASSERT_EQ(stack.size(), 3u);
      EXPECT_EQ(stack[0], sites.widgets);
      EXPECT_EQ(site.size, 64 + (stack[2] - 0x1000u));  // the size its Alloc gave, as its stack says
    }
    ASSERT_EQ(s.thread_names.size(), 1u);
    EXPECT_EQ(s.thread_names[0].name, "main");
  }
  // The annex's chunks are compressed at level 3 (finalize.cc, after_exit_level),
  // the rest at the options' 6: each stored payload is its raw payload's
  // level-3 frame. (Whether level 6 would make another frame depends on the
  // payload, which holds this run's addresses: for this small annex it
  // sometimes does not, so that is not asserted.)
  size_t annexed = 0;
  std::vector<uint8_t> buffer;
  for (const reader::ChunkView& chunk : reader::scan_chunks((*out)->data()).chunks) {
    if (chunk.type != static_cast<uint8_t>(format::ChunkType::Snapshot) || !(chunk.flags & format::kChunkZstd)) continue;
    auto payload = reader::chunk_payload(chunk, buffer);
    ASSERT_TRUE(payload);
    if (payload->empty() || (*payload)[0] < static_cast<uint8_t>(format::SnapshotPart::Names)) continue;  // the recorder's
    ++annexed;
    std::vector<uint8_t> level_3;
    reader::append_chunk_compressed(level_3, format::ChunkType::Snapshot, *payload, 3);
    const std::span<const uint8_t> stored((*out)->data().data() + chunk.offset, format::kChunkHeaderSize + chunk.stored.size());
    EXPECT_TRUE(std::ranges::equal(stored, level_3));
  }
  EXPECT_GT(annexed, 0u);
}

TEST(Finalize, FollowingTheWrittenFileChangesNothing) { expect_following_changes_nothing<CountingTap>(false); }
TEST(Finalize, FollowingAKilledProgramsFileChangesNothing) { expect_following_changes_nothing<CountingTap>(true); }
TEST(Finalize, FollowingWithTheIndexAndAnExitSnapshotChangesNothing) {
  expect_following_changes_nothing<IndexingTap>(false, Extras::ExitSnapshot);
}
TEST(Finalize, FollowingWithASnapshotOfABlockFreedSinceChangesNothing) {
  expect_following_changes_nothing<IndexingTap>(false, Extras::EarlierSnapshot);
}

// A follower sleeping with the whole file read wakes when the file grows, and
// when it is asked to finish, not when its look at the file is due: here that
// look is a minute away, so each step would wait for it.
TEST(Finalize, FollowerWakesWhenTheFileGrowsAndWhenAskedToFinish) {
  struct AtomicCountingTap : FinalizeTap {
    void begin(const format::TraceInfo&) override {}
    void event(const format::Event&) override { events.fetch_add(1, std::memory_order_relaxed); }
    void events_over() override {}
    std::optional<std::vector<uint8_t>> index(std::span<const uint8_t>) override { return std::nullopt; }
    std::atomic<uint64_t> events{0};
  } tap;
  const Sites sites = capture_sites();
  TraceBuilder trace(format::Mode::All);
  trace.flush();
  for (int chunk = 0; chunk < 2; ++chunk) {
    for (int i = 0; i < 40; ++i) trace.alloc({sites.widgets, sites.c}, 64 + i, 100 * chunk + i);
    trace.flush();
  }
  const std::vector<uint8_t>& bytes = trace.bytes();
  const size_t first = trace.chunk_ends()[trace.chunk_ends().size() - 2];
  TempDir dir;
  const std::string path = dir / "followed.trace";
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(first));
  out.flush();
  const auto start = std::chrono::steady_clock::now();
  auto waited = [&] { return std::chrono::steady_clock::now() - start; };
  auto read_until = [&](uint64_t events) {
    while (tap.events.load() < events && waited() < std::chrono::seconds(20))
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return tap.events.load();
  };
  FinalizeOptions options{.symbolize = false, .tap = &tap};
  TraceFollower follower(path, options, {}, std::chrono::minutes(1));
  ASSERT_EQ(read_until(40), 40u);  // its first look, at the start
  out.write(reinterpret_cast<const char*>(bytes.data() + first), static_cast<std::streamsize>(bytes.size() - first));
  out.flush();
  EXPECT_EQ(read_until(80), 80u);
  Expected<FollowedRead> read = follower.finish();
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->collected.events, trace.events());
  EXPECT_LT(waited(), std::chrono::seconds(20));
}

// What a follower has read goes to the disk while the program runs, in whole
// pages of whole chunks: the page the writer's next chunk lands in is not
// written twice, and nothing past what was read.
// A trace of `chunks` events chunks of 3,000 allocations each.
TraceBuilder trace_of_chunks(int chunks) {
  TraceBuilder trace(format::Mode::All);
  for (int chunk = 0; chunk < chunks; ++chunk) {
    for (uint64_t i = 0; i < 3000; ++i) trace.alloc({0x1000u + i * 7919 % 65521, 0x9000u + i}, 1 + i * 31 % 4093, i);
    trace.flush();
  }
  return trace;
}

TEST(GrowingFile, StartsTheWritebackOfTheWholePagesOfTheWholeChunks) {
  TraceBuilder trace = trace_of_chunks(4);
  const std::vector<uint8_t>& bytes = trace.bytes();
  const std::vector<size_t>& ends = trace.chunk_ends();
  const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  ASSERT_GE(ends.size(), 4u);
  ASSERT_GT(ends[1], 2 * page);
  ASSERT_NE(ends[1] % page, 0u);
  TempDir dir;
  const std::string path = dir / "growing.trace";
  std::ofstream out(path, std::ios::binary);
  auto write_to = [&](size_t end) {
    out.write(reinterpret_cast<const char*>(bytes.data() + out.tellp()), static_cast<std::streamsize>(end - out.tellp()));
    out.flush();
  };
  write_to((ends[1] + ends[2]) / 2);  // two chunks and half the third
  auto file = reader::GrowingFile::open(path);
  ASSERT_TRUE(file) << file.error().message;
  reader::GrowingFile& growing = **file;
  auto grown = [](reader::GrowingFile& f) {
    Expected<bool> g = f.grow();
    return g && *g;
  };
  ASSERT_TRUE(grown(growing));
  ASSERT_EQ(growing.data().size(), ends[1]);
  growing.start_writeback();
  EXPECT_EQ(growing.written_back(), ends[1] / page * page);
  write_to(bytes.size());
  ASSERT_TRUE(grown(growing));
  growing.start_writeback();
  EXPECT_EQ(growing.written_back(), bytes.size() / page * page);
}

// The bytes taken stay readable when another process shrinks the file under
// them (with a mapping of the file, reading them faulted with SIGBUS: a traced
// bash script's commands truncated its trace while memloupe followed it), and
// the next look says what happened.
TEST(GrowingFile, WhatWasReadStaysReadableWhenTheFileIsTruncated) {
  TraceBuilder trace = trace_of_chunks(3);
  const std::vector<uint8_t>& bytes = trace.bytes();
  TempDir dir;
  const std::string path = dir / "growing.trace";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  auto file = reader::GrowingFile::open(path);
  ASSERT_TRUE(file) << file.error().message;
  Expected<bool> grown = (*file)->grow();
  ASSERT_TRUE(grown && *grown);
  const std::span<const uint8_t> held = (*file)->data();
  ASSERT_EQ(held.size(), trace.chunk_ends().back());
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  EXPECT_TRUE(std::equal(held.begin(), held.end(), bytes.begin()));
  grown = (*file)->grow();
  ASSERT_FALSE(grown);
  EXPECT_NE(grown.error().message.find("the file shrank while it was followed"), std::string::npos);
  EXPECT_TRUE((*file)->whole().has_value());
}

TEST(Finalize, AFollowerOfAFileNeverWrittenSaysSo) {
  TempDir dir;
  FinalizeOptions options;
  TraceFollower follower(dir / "never.trace", options);
  EXPECT_FALSE(follower.finish());
}

TEST(Finalize, LeavesASymbolisedTraceAloneUnlessAskedToRedoIt) {
  const Sites sites = capture_sites();
  TraceBuilder trace;
  for (const Module& m : loaded_modules()) trace.module_load(m);
  trace.alloc({sites.widgets}, 100, 10);
  trace.flush();
  TempDir dir;
  trace.write(dir / "t.trace");
  ASSERT_TRUE(finalize_trace(dir / "t.trace", dir / "t.trace", {}));
  const std::string once = testing::read_file(dir / "t.trace");

  auto again = finalize_trace(dir / "t.trace", dir / "t.trace", {});
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->already_symbolized);
  EXPECT_EQ(testing::read_file(dir / "t.trace"), once);

  auto redo = finalize_trace(dir / "t.trace", dir / "t.trace", {.resymbolize = true});
  ASSERT_TRUE(redo) << redo.error().message;
  EXPECT_FALSE(redo->already_symbolized);
  // The old symbols section was replaced, not kept beside the new one.
  EXPECT_EQ(testing::read_file(dir / "t.trace"), once);
}

// An address range reused by a later dlopen: each address is named by the
// module that was mapped over it when a backtrace held it.
TEST(Finalize, ResolvesAddressesAgainstTheModuleMappedAtTheTime) {
  const Sites sites = capture_sites();
  auto self = loaded_module_at(sites.widgets);
  ASSERT_TRUE(self);
  Module other = *self;
  other.path = "/nonexistent/libother.so";
  other.build_id = {1, 2, 3, 4};
  const uint64_t only_under_other = sites.widgets + 2;

  TraceBuilder trace;
  trace.module_load(*self, 0);
  trace.alloc({sites.widgets}, 100, 10);
  trace.module_unload(*self, 20);
  trace.module_load(other, 30);
  trace.alloc({sites.widgets, only_under_other}, 100, 40);
  trace.flush();
  TempDir dir;
  trace.write(dir / "t.trace");

  std::vector<std::string> warnings;
  FinalizeOptions options;
  options.symbolizer.warn = [&](const std::string& w) { warnings.push_back(w); };
  auto stats = finalize_trace(dir / "t.trace", dir / "out.trace", options);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_EQ(stats->addresses, 2u);
  EXPECT_EQ(stats->symbolized, 1u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("/nonexistent/libother.so"), std::string::npos) << warnings[0];

  auto r = open_or_fail(dir / "out.trace");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->symbols().at(sites.widgets).back().function,
            "memloupe_testprog::build_widgets(unsigned long)");
  EXPECT_EQ(r->symbols().count(only_under_other), 0u);
}

TEST(Finalize, RefusesWhatIsNotATrace) {
  TempDir dir;
  std::ofstream(dir / "junk") << "not a trace at all";
  auto stats = finalize_trace(dir / "junk", dir / "out", {});
  EXPECT_FALSE(stats);
  EXPECT_FALSE(std::filesystem::exists(dir / "out"));
  EXPECT_FALSE(finalize_trace(dir / "missing", dir / "out", {}));
}

}  // namespace
}  // namespace memloupe::finalize
