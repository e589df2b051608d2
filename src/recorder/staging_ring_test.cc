#include "recorder/staging_ring.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace memloupe::recorder {
namespace {

// A record whose every field and frame is derived from (writer, sequence), so the
// consumer can check that nothing was torn, mixed up or reordered.
StagedRecord make(uint32_t writer, uint64_t seq, std::vector<uint64_t>& frames) {
  StagedRecord r;
  r.kind = static_cast<StagedKind>(seq % 3);
  r.func = static_cast<format::Func>(seq % format::kFuncCount);
  r.sampled = seq % 2 == 0;
  r.thread = format::ThreadId{writer};
  r.alignment = static_cast<uint32_t>(seq % 7) * 16;
  r.time_ns = seq * 1000 + writer;
  r.address = 0x10000 + seq * 64;
  r.size = seq % 5000;
  r.old_address = seq ^ 0xabcdef;
  frames.resize(seq * 37 % (StagingRing::kMaxFrames + 1));  // 0..256: one to 18 slots
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = (uint64_t{writer} << 48) ^ (seq << 9) ^ i;
  return r;
}

void expect_same(const StagedRecord& a, const StagedRecord& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.func, b.func);
  EXPECT_EQ(a.sampled, b.sampled);
  EXPECT_EQ(a.thread.value, b.thread.value);
  EXPECT_EQ(a.alignment, b.alignment);
  EXPECT_EQ(a.time_ns, b.time_ns);
  EXPECT_EQ(a.address, b.address);
  EXPECT_EQ(a.size, b.size);
  EXPECT_EQ(a.old_address, b.old_address);
}

// Records from writers 0..n-1 as make() gives them, cut to `max_frames` frames,
// and the consumer's check of them: each whole, each writer's in the order it
// put them.
struct WriterRecords {
  WriterRecords(uint32_t writers, size_t max_frames) : next(writers, 0), max_frames(max_frames) {}
  StagedRecord record(uint32_t w, uint64_t seq, std::vector<uint64_t>& frames) const {
    const StagedRecord r = make(w, seq, frames);
    frames.resize(frames.size() % (max_frames + 1));
    return r;
  }
  void check(const StagedRecord& got, std::span<const uint64_t> got_frames) {
    std::vector<uint64_t> want_frames;
    const StagedRecord want = record(got.thread.value, next.at(got.thread.value)++, want_frames);
    bad += got.time_ns != want.time_ns || got.address != want.address ||
           !std::equal(got_frames.begin(), got_frames.end(), want_frames.begin(), want_frames.end());
    ++records;
    slots += StagingRing::slots_for(got_frames.size());
  }
  // Writer threads putting `each` records apiece with `help`; `writing` counts
  // those not done.
  template <class Help>
  std::vector<std::thread> start(StagingRing& ring, uint64_t each, Help help, std::atomic<uint32_t>& writing) {
    writing = static_cast<uint32_t>(next.size());
    std::vector<std::thread> writers;
    for (uint32_t w = 0; w < next.size(); ++w)
      writers.emplace_back([&ring, &writing, this, w, each, help] {
        std::vector<uint64_t> frames;
        for (uint64_t seq = 0; seq < each; ++seq) {
          const StagedRecord r = record(w, seq, frames);  // before `frames` is read
          ring.put(r, frames, help);
        }
        writing.fetch_sub(1);
      });
    return writers;
  }
  void expect_all(uint64_t each) const {
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(records, next.size() * each);
    for (uint32_t w = 0; w < next.size(); ++w) EXPECT_EQ(next[w], each) << "writer " << w;
  }

  std::vector<uint64_t> next;  // per writer: the sequence number of its next record
  size_t max_frames;
  size_t bad = 0, records = 0, slots = 0;
};

TEST(StagingRingTest, SlotsPerRecord) {
  EXPECT_EQ(StagingRing::slots_for(0), 1u);
  EXPECT_EQ(StagingRing::slots_for(StagingRing::kHeadFrames), 1u);
  EXPECT_EQ(StagingRing::slots_for(StagingRing::kHeadFrames + 1), 2u);
  EXPECT_EQ(StagingRing::slots_for(StagingRing::kHeadFrames + StagingRing::kMoreFrames), 2u);
  EXPECT_EQ(StagingRing::slots_for(StagingRing::kHeadFrames + StagingRing::kMoreFrames + 1), 3u);
}

TEST(StagingRingTest, OneWriterRoundTripsEveryFieldAcrossManyLaps) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  std::vector<uint64_t> frames;
  uint64_t next = 0;
  const auto check = [&](const StagedRecord& got, std::span<const uint64_t> got_frames) {
    std::vector<uint64_t> want_frames;
    const StagedRecord want = make(1, next++, want_frames);
    expect_same(got, want);
    ASSERT_EQ(std::vector<uint64_t>(got_frames.begin(), got_frames.end()), want_frames);
  };
  const auto help = [&] { return ring.drain(check, 0) != 0; };  // a full ring is drained by the writer
  for (uint64_t seq = 0; seq < 20'000; ++seq) {
    const StagedRecord r = make(1, seq, frames);  // before the span over `frames` is taken
    ring.put(r, frames, help);
  }
  ring.drain(check, 0);
  EXPECT_EQ(next, 20'000u);
  EXPECT_EQ(ring.drain(check, 0), 0u);
}

// Two writers' deep backtraces that share outer frames with their own last one
// (and not with each other's), interleaved with shallow ones that go whole:
// every record comes back with exactly its frames, across laps, and after the
// ring is replaced (a new generation: the writers' last backtraces are stale).
TEST(StagingRingTest, SharedOuterFramesRoundTrip) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  StagedFrames mine[2];
  std::vector<std::vector<uint64_t>> want;
  size_t got = 0;
  // What the consumer tells the encoder (SharedPrefix): for each writer's deep
  // records, numbered one after the other, how many outer frames each shares
  // with the writer's previous deep one.
  std::vector<uint64_t> prev_deep[2];
  uint32_t prev_seq[2] = {0, 0};
  size_t shared_total = 0;
  const auto check = [&](const StagedRecord& r, std::span<const uint64_t> frames) {
    ASSERT_LT(got, want.size());
    EXPECT_EQ(r.size, got);
    EXPECT_EQ(std::vector<uint64_t>(frames.begin(), frames.end()), want[got]) << got;
    ++got;
    if (frames.size() <= StagingRing::kHeadFrames) {
      EXPECT_EQ(r.prefix.chain, 0u);
      return;
    }
    const uint32_t w = r.thread.value;
    EXPECT_EQ(r.prefix.chain, reinterpret_cast<uintptr_t>(&mine[w]));
    EXPECT_EQ(r.prefix.seq, prev_seq[w] + 1);
    ASSERT_LE(r.prefix.shared, std::min(frames.size(), prev_deep[w].size()));
    EXPECT_TRUE(std::equal(frames.end() - r.prefix.shared, frames.end(), prev_deep[w].end() - r.prefix.shared));
    shared_total += r.prefix.shared;
    prev_seq[w] = r.prefix.seq;
    prev_deep[w].assign(frames.begin(), frames.end());
  };
  uint64_t x = 12345;
  const auto rnd = [&](uint64_t below) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % below;
  };
  for (int generation = 0; generation < 2; ++generation) {
    if (generation == 1) {
      ASSERT_TRUE(ring.init());
    }
    got = 0;
    want.clear();
    std::vector<uint64_t> stack[2];  // outermost first
    for (uint64_t seq = 0; seq < 30'000; ++seq) {
      const size_t w = rnd(2);
      std::vector<uint64_t>& s = stack[w];
      // Return from a few frames, call a few others (up to 300 deep: past kMaxFrames).
      s.resize(s.size() - std::min<size_t>(s.size(), rnd(6)));
      for (uint64_t k = rnd(7); k > 0 && s.size() < 300; --k) s.push_back((w + 1) << 40 | rnd(50));
      std::vector<uint64_t> frames(s.rbegin(), s.rend());  // innermost first
      if (frames.size() > StagingRing::kMaxFrames) frames.resize(StagingRing::kMaxFrames);
      StagedRecord r;
      r.size = want.size();
      r.thread = format::ThreadId{static_cast<uint32_t>(w)};
      want.push_back(frames);
      StagedFrames* with = frames.size() > StagingRing::kHeadFrames ? &mine[w] : nullptr;
      ring.put(r, frames, [&] { return ring.drain(check, 0) != 0; }, with);
    }
    ring.drain(check, 0);
    EXPECT_EQ(got, want.size());
    EXPECT_GT(shared_total, got * 10);
  }
}

// The unwinder's hint (StagedFrames::next): a lower bound of the outer frames
// a backtrace shares with the writer's last one, taken only if that one is the
// walk it names. The shared count is the comparison's in every case: with a
// right hint, a hint naming another walk (even one claiming too many frames),
// no hint, and after the ring is replaced.
TEST(StagingRingTest, TheUnwindersHintSkipsOnlyFramesKnownEqual) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  StagedFrames mine;
  std::vector<uint64_t> prev;  // the last deep backtrace put
  std::vector<size_t> want_shared;
  uint64_t x = 99;
  const auto rnd = [&](uint64_t below) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    return (x >> 33) % below;
  };
  std::vector<uint64_t> stack(40);  // outermost first
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = 0x1000 + i;
  uint64_t walk = 0;
  for (int round = 0; round < 2000; ++round) {
    if (round == 1000) {
      ASSERT_TRUE(ring.init());  // a new generation: nothing is shared
    }
    stack.resize(stack.size() - rnd(6));
    for (uint64_t k = rnd(7); k > 0 && stack.size() < 120; --k) stack.push_back(rnd(3));  // repeats
    if (stack.size() < 20) stack.resize(20, 7);
    std::vector<uint64_t> frames(stack.rbegin(), stack.rend());
    size_t truth = 0;
    if (!prev.empty() && round != 1000) {
      while (truth < std::min(frames.size(), prev.size()) &&
             frames[frames.size() - 1 - truth] == prev[prev.size() - 1 - truth])
        ++truth;
    }
    // Right hints (at most the truth), and wrong ones naming another walk.
    const uint64_t kind = rnd(3);
    mine.next.previous = kind == 0 ? walk : kind == 1 ? walk + 1000 : 0;
    mine.next.outer = kind == 0 ? rnd(truth + 1) : frames.size();
    mine.next.walk = ++walk;
    want_shared.push_back(truth);
    prev = frames;
    StagedRecord r;
    r.size = static_cast<uint64_t>(round);
    ring.put(r, frames, [&] { return true; }, &mine);
    ring.drain([&](const StagedRecord& rec, std::span<const uint64_t> got_frames) {
      EXPECT_EQ(rec.prefix.shared, want_shared[rec.size]) << rec.size;
      EXPECT_EQ(std::vector<uint64_t>(got_frames.begin(), got_frames.end()), frames) << rec.size;
    }, 0);
  }
}

// Writers on several threads, the consumer draining whenever it gets the lock (as
// the flush thread and full-ring writers do): every record arrives once, whole,
// and each writer's records in the order it put them.
TEST(StagingRingTest, ConcurrentWritersAreDrainedInTicketOrder) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  constexpr uint64_t kEach = 30'000;
  WriterRecords want(4, StagingRing::kMaxFrames);
  const auto check = [&](const StagedRecord& got, std::span<const uint64_t> frames) { want.check(got, frames); };
  std::mutex consumer;
  // As the recorder's: drain if nobody else does, else sleep in the ring.
  const auto help = [&] {
    if (!consumer.try_lock()) return false;
    const size_t drained = ring.drain(check, 0);
    consumer.unlock();
    return drained != 0;
  };
  std::atomic<uint32_t> writing;
  for (auto& t : want.start(ring, kEach, help, writing)) t.join();
  std::lock_guard<std::mutex> g(consumer);
  ring.drain(check, 1'000'000'000);
  want.expect_all(kEach);
}

// Writers that never drain (their help() always fails, as when the flush thread
// holds the lock) sleep in the ring until a consumer thread, draining in small
// pieces between naps, has made room: every record arrives, in each writer's
// order, and the writers were woken together, at most about once per half ring
// drained, not once per release.
TEST(StagingRingTest, WritersSleepUntilHalfTheRingIsFree) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  constexpr uint64_t kWriters = 8, kEach = 20'000;
  WriterRecords want(kWriters, 39);  // 1-3 slots a record: many records per lap
  const auto check = [&](const StagedRecord& got, std::span<const uint64_t> frames) { want.check(got, frames); };
  std::atomic<uint32_t> writing;
  std::vector<std::thread> writers = want.start(ring, kEach, [] { return false; }, writing);
  // The consumer: a piece of the ring at a time, with naps, so that it falls behind.
  while (writing.load() != 0) {
    ring.drain(check, 0);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (auto& t : writers) t.join();
  ring.drain(check, 1'000'000'000);
  want.expect_all(kEach);
  // The writers slept: a consumer this slow cannot keep the ring from filling.
  EXPECT_GT(ring.wakeups(), 0u);
  // Each wake-up needs a writer that found the ring full after the one before
  // freed half of it, so about one per half ring (measured: 29-39 for 42
  // half rings); a writer that set the flag and then found room leaves it set
  // for one spare wake-up. Waking once per release (every kReleaseEvery
  // records) would be ~2,500.
  const size_t half_rings = want.slots / (StagingRing::kSlots / 2) + 1;
  EXPECT_LE(ring.wakeups(), 4 * half_rings + kWriters);
}

// A writer that took its ticket but has not published yet (preempted between
// reserve() and write()) stops a drain that does not wait, even when later
// tickets are published; a drain that waits delivers them all, in ticket order.
TEST(StagingRingTest, AnUnpublishedTicketHoldsBackTheRecordsAfterIt) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  std::vector<uint64_t> none;
  std::vector<uint64_t> seen;
  const auto record = [&](const StagedRecord& r, std::span<const uint64_t>) { seen.push_back(r.size); };
  uint64_t drained = 0;
  const uint64_t held = ring.reserve(1, [] { return true; }, drained);
  StagedRecord later;
  later.size = 222;
  ring.put(later, none, [] { return true; });  // published behind the gap
  EXPECT_EQ(ring.drain(record, 0), 0u);
  std::thread writer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    StagedRecord mine;
    mine.size = 111;
    ring.write(held, mine, none);
  });
  EXPECT_EQ(ring.drain(record, 1'000'000'000), 2u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{111, 222}));
  writer.join();
}

// A writer waiting for room (here: held in help() while the ring is full) has
// taken no ticket yet: records put after the ring was drained go first, and
// nothing waits for the waiter.
TEST(StagingRingTest, AWriterWaitingForRoomHoldsNoTicket) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  std::vector<uint64_t> none;
  std::vector<uint64_t> seen;
  const auto record = [&](const StagedRecord& r, std::span<const uint64_t>) { seen.push_back(r.size); };
  StagedRecord r;
  for (uint64_t i = 0; i < StagingRing::kSlots; ++i) ring.put(r, none, [] { return true; });  // full
  std::atomic<bool> waiting{false}, go{false};
  std::thread held([&] {
    StagedRecord mine;
    mine.size = 111;
    ring.put(mine, none, [&] {
      waiting = true;
      while (!go) std::this_thread::yield();
      return true;
    });
  });
  while (!waiting) std::this_thread::yield();
  EXPECT_EQ(ring.drain(record, 0), StagingRing::kSlots);
  StagedRecord later;
  later.size = 222;
  ring.put(later, none, [] { return true; });
  seen.clear();
  EXPECT_EQ(ring.drain(record, 0), 1u);  // no gap before it
  go = true;
  held.join();
  EXPECT_EQ(ring.drain(record, 0), 1u);
  EXPECT_EQ(seen, (std::vector<uint64_t>{222, 111}));
}

// Before applying record i, the drain has handed ahead() the address and old
// address of every record up to i + kLookahead (those published), each once and
// in order, whatever the records' lengths: never a continuation slot of a longer
// record (its word is left from an earlier lap, or 0), nor a ticket not yet
// published.
TEST(StagingRingTest, AheadSeesEachRecordKLookaheadRecordsOn) {
  StagingRing ring;
  ASSERT_TRUE(ring.init());
  uint64_t records = 0;
  std::vector<std::pair<uint64_t, uint64_t>> all;  // every record's (address, old address)
  const auto put = [&](size_t n_frames) {
    StagedRecord r;
    r.address = 0x1000 + records * 16;
    r.old_address = records * 3;
    r.size = records;
    all.emplace_back(r.address, r.old_address);
    ++records;
    const std::vector<uint64_t> frames(n_frames, 7);
    ring.put(r, frames, []() -> bool {
      ADD_FAILURE() << "the ring filled";
      std::abort();  // put() would wait for ever
    });
  };
  std::vector<std::pair<uint64_t, uint64_t>> got;
  uint64_t applied = 0, first_of_drain = 0, short_windows = 0;
  const auto apply = [&](const StagedRecord& r, std::span<const uint64_t>) {
    EXPECT_EQ(r.size, applied);
    // Announced so far in this drain: records first_of_drain + 1 .. applied + kLookahead.
    const uint64_t end = std::min<uint64_t>(applied + StagingRing::kLookahead + 1, records);
    if (got.size() != end - first_of_drain - 1) ++short_windows;
    ++applied;
  };
  const auto ahead = [&](uint64_t address, uint64_t old) { got.emplace_back(address, old); };
  // Two laps, so that the second finds earlier heads' words in continuation slots;
  // records of 1, 2 and 18 slots.
  const size_t lengths[] = {0, 12, 4, 256, 24, 9};
  for (int lap = 0; lap < 2; ++lap) {
    got.clear();
    first_of_drain = records;
    uint64_t tickets = 0;
    for (size_t i = 0;; ++i) {
      const size_t n = lengths[i % 6];
      if (tickets + StagingRing::slots_for(n) > StagingRing::kSlots - 30) break;
      tickets += StagingRing::slots_for(n);
      put(n);
    }
    ring.drain(apply, ahead, 0);
    EXPECT_EQ(applied, records);
    const std::vector<std::pair<uint64_t, uint64_t>> want(all.begin() + static_cast<long>(first_of_drain) + 1, all.end());
    EXPECT_EQ(got, want);
  }
  EXPECT_EQ(short_windows, 0u);
}

}  // namespace
}  // namespace memloupe::recorder
