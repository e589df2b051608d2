// ThreadedOverview (the Overview, and the Aggregate by pass 2 as it streams)
// against OverviewBuilder::add and AggregateBuilder::add after that Overview
// over the same events: the encoded index (every count, f64 bits included,
// every heap point and series bucket, the stacks in order) must be the same
// bytes. One counting rule: pass 2's.
#include "analysis/index_aggregate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <tuple>

#include "analysis/index.h"
#include "support/test_script.h"
#include "support/test_streams.h"

namespace memloupe::analysis {
namespace {

using testing::Script;

// A trace with many distinct deep stacks (so batches carry new stacks' frames),
// several threads, rare events between, and blocks alive at the end.
Script random_trace(format::Mode mode, uint64_t seed, int events) {
  Script s(mode, 4096);
  std::mt19937_64 rng(seed);
  const testing::RandomHeap heap{.events = events, .phase = 5000, .threads = 5, .time_steps = 4,
                                 .min_size = 1, .size_span = 9000};
  const auto deep_stack = [](auto& r) {
    std::vector<uint64_t> stack(r() % 40);
    for (size_t j = 0; j < stack.size(); ++j) stack[j] = 0x1000 * (j + 1) + r() % (j % 3 + 1);
    return stack;
  };
  const uint64_t t = testing::add_random_heap(s, rng, heap, deep_stack, [&](int i, uint64_t now) {
    if (i % 997 == 0) s.rss(now, rng() % 100000);
    if (i % 4999 == 0) s.marker(now, "m" + std::to_string(i));
  });
  s.end(t + 5);
  return s;
}

// The index's query, resolved before the events as IndexBuilder does.
Query index_query() {
  QueryArgs args;
  args.series_buckets = kIndexSeriesBuckets;
  return resolve(args, Overview{}).value();
}

std::vector<uint8_t> encoded(const Overview& overview, Aggregate aggregate) {
  Index index;
  index.overview = overview;
  index.key.series_buckets = aggregate.series_buckets;  // (what the decoder checks)
  index.aggregate = std::move(aggregate);
  std::optional<std::vector<uint8_t>> bytes = encode_index(index);
  return bytes ? *bytes : std::vector<uint8_t>{};
}

// The two passes over `s`: the Overview, then the Aggregate of the index's
// query resolved with it.
struct PassTwo {
  Overview overview;
  Aggregate aggregate;
};
PassTwo pass_two(const Script& s) {
  OverviewBuilder ob(s.info);
  for (const format::Event& e : s.events) ob.add(e);
  PassTwo out{std::move(ob).finish(), {}};
  QueryArgs args;
  args.series_buckets = kIndexSeriesBuckets;
  const Query query = resolve(args, out.overview).value();
  reader::SymbolTable no_symbols;
  AggregateBuilder serial(out.overview, no_symbols, query);
  for (const format::Event& e : s.events) serial.add(e);
  out.aggregate = std::move(serial).finish();
  return out;
}

// The one read: the Overview and the Aggregate on the worker, as IndexBuilder
// does, against the two passes.
TEST(ThreadedOverview, AggregateGivesTheBytesOfPassTwo) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (uint64_t seed : {1, 2, 3}) {
      // More events than a few batches, and a seed whose trace ends mid-batch.
      const Script s = random_trace(mode, seed, 3 * static_cast<int>(EventPipe::kBatch) * static_cast<int>(seed) + 17);
      const auto [overview, expected] = pass_two(s);

      ASSERT_GT(expected.stacks.size(), 100u);
      ASSERT_GT(expected.series_buckets, 0u);
      ASSERT_FALSE(expected.totals[Metric::Peak].empty());
      ASSERT_FALSE(expected.totals[Metric::Leaked].empty());
      // (What a Mode::All trace's freed blocks add as integer tallies: aggregate.cc, Tally.)
      ASSERT_FALSE(expected.totals[Metric::Temporary].empty());
      ASSERT_FALSE(expected.immediate.empty());
      const std::vector<uint8_t> want = encoded(overview, expected);
      ASSERT_FALSE(want.empty());
      for (Handover handover : {Handover::Worker, Handover::Inline}) {
        ThreadedOverview threaded(s.info, index_query(), handover);
        for (const format::Event& e : s.events) threaded.add(e);
        ThreadedOverview::Result got = std::move(threaded).finish();
        EXPECT_EQ(encoded(got.overview, std::move(got.aggregate)), want)
            << "mode " << static_cast<int>(mode) << " seed " << seed << " handover " << static_cast<int>(handover);
      }
    }
  }
}

// The follower's read hands each Alloc the reader's key, whose memo holds
// its stack's id once interned (reader.h, BacktraceKey): an Alloc whose memo
// holds one goes straight to the Aggregate (ThreadedOverview::add), the
// others through the table. One block in seven is a mapping block (mmap and
// munmap), which the Overview keeps apart: its Count is made there (the
// exact path's mapped_exact, the sampled trace's estimated_alloc). Both
// read inline, both give pass 2's bytes.
TEST(ThreadedOverview, KeyedAllocsAndMappingBlocksGiveTheBytesOfPassTwo) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    Script s = random_trace(mode, 4, 30000);
    size_t mapping = 0;
    for (format::Event& e : s.events) {
      if (auto* a = std::get_if<format::Alloc>(&e); a && a->id.value % 7 == 0) {
        a->func = format::Func::Mmap;
        ++mapping;
      } else if (auto* f = std::get_if<format::Free>(&e); f && f->id.value % 7 == 0) {
        f->func = format::Func::Munmap;
      }
    }
    ASSERT_GT(mapping, 1000u);
    const auto [overview, expected] = pass_two(s);
    ASSERT_TRUE(overview.mapped.any());
    ASSERT_FALSE(overview.mapped.leaked.empty());
    const std::vector<uint8_t> want = encoded(overview, expected);
    ASSERT_FALSE(want.empty());

    // A memo per distinct backtrace, as the reader's cache keeps one.
    std::map<std::vector<uint64_t>, uint32_t> memos;
    size_t hits = 0;
    ThreadedOverview threaded(s.info, index_query(), Handover::Inline);
    for (const format::Event& e : s.events) {
      const auto* a = std::get_if<format::Alloc>(&e);
      if (!a) {
        threaded.add(e);
        continue;
      }
      uint32_t& memo = memos[std::vector<uint64_t>(a->backtrace.begin(), a->backtrace.end())];
      hits += memo != 0;
      threaded.add(*a, reader::BacktraceKey{.serial = 1, .slot = 0, .memo = &memo});
    }
    ThreadedOverview::Result got = std::move(threaded).finish();
    EXPECT_GT(hits, 1000u);  // (and as many Allocs of a stack not seen before)
    EXPECT_EQ(encoded(got.overview, std::move(got.aggregate)), want) << "mode " << static_cast<int>(mode);
  }
}

// Version 4's stacks (each the outermost frames it shares with the one
// before and its own) and predicted timelines decode to what was encoded:
// every stack's frames, every heap point, the same bytes encoded again.
TEST(IndexEncoding, DecodesToWhatWasEncoded) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    const Script s = random_trace(mode, 5, 20000);
    const auto [overview, aggregate] = pass_two(s);
    const std::vector<uint8_t> bytes = encoded(overview, aggregate);
    ASSERT_EQ(bytes[0], kIndexVersion);
    Expected<Index> got = decode_index(reader::Cursor(bytes, 0, true), s.info);
    ASSERT_TRUE(got) << got.error().message;
    const Aggregate& a = got->aggregate;
    ASSERT_EQ(a.stacks.size(), aggregate.stacks.size());
    size_t shared = 0;  // frames a stack has in common with the one before, from the outermost
    for (uint32_t i = 0; i < a.stacks.size(); ++i) {
      const auto want = aggregate.frames(StackId{i});
      const auto frames = a.frames(StackId{i});
      ASSERT_TRUE(std::equal(frames.begin(), frames.end(), want.begin(), want.end())) << "stack " << i;
      if (i > 0) {
        const auto before = aggregate.frames(StackId{i - 1});
        shared += std::mismatch(want.rbegin(), want.rend(), before.rbegin(), before.rend()).first - want.rbegin();
      }
    }
    EXPECT_GT(shared, 0u);  // the test's stacks share callers, as real ones do
    ASSERT_EQ(got->overview.heap.points.size(), overview.heap.points.size());
    ASSERT_GT(overview.heap.points.size(), 10u);
    for (size_t i = 0; i < overview.heap.points.size(); ++i) {
      const HeapPoint& x = got->overview.heap.points[i];
      const HeapPoint& y = overview.heap.points[i];
      EXPECT_EQ(std::tie(x.live_end, x.live_max, x.live_min, x.allocated, x.freed),
                std::tie(y.live_end, y.live_max, y.live_min, y.allocated, y.freed))
          << "point " << i;
    }
    EXPECT_EQ(encoded(got->overview, got->aggregate), bytes) << "mode " << static_cast<int>(mode);
  }
}

// A heap point whose end is not the previous end + allocated - freed (a
// sampled trace's weighted values can be any whole numbers), whose max and min
// lie beyond both ends, or whose values are negative, round-trips too.
TEST(IndexEncoding, PredictedTimelinesKeepPointsThePredictionMisses) {
  const Script s = random_trace(format::Mode::All, 6, 2000);
  auto [overview, aggregate] = pass_two(s);
  overview.heap.points = {{100, 150, 90, 60, 0}, {70, 300, -5, 10, 1000}, {-20, 0, -40, 0, 0}, {4e15, 4e15, 0, 4e15, 0}};
  const std::vector<uint8_t> bytes = encoded(overview, aggregate);
  Expected<Index> got = decode_index(reader::Cursor(bytes, 0, true), s.info);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->overview.heap.points.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const HeapPoint& x = got->overview.heap.points[i];
    const HeapPoint& y = overview.heap.points[i];
    EXPECT_EQ(std::tie(x.live_end, x.live_max, x.live_min, x.allocated, x.freed),
              std::tie(y.live_end, y.live_max, y.live_min, y.allocated, y.freed))
        << "point " << i;
  }
}

// The rule for a small trace (index.h, kIndexMinEvents): IfItPays writes an
// index from kIndexMinEvents events on (the Overview's count), Always at any
// count. RSS samples are the cheapest events to make a million of.
TEST(IndexBuilder, IfItPaysWritesOneFromTheMinimumEventsOn) {
  const auto index_of = [](IndexWhen when, uint64_t events) {
    format::TraceInfo info;
    info.mode = format::Mode::All;
    IndexBuilder builder(info, when);
    for (uint64_t t = 0; t + 1 < events; ++t) builder.add(format::Event{format::RssSample{t, 4096}});
    builder.add(format::Event{format::TraceEnd{events, format::EndReason::Exit}});
    return builder.finish({}).has_value();
  };
  EXPECT_FALSE(index_of(IndexWhen::IfItPays, kIndexMinEvents - 1));
  EXPECT_TRUE(index_of(IndexWhen::IfItPays, kIndexMinEvents));
  EXPECT_TRUE(index_of(IndexWhen::Always, 2));
  EXPECT_FALSE(index_of(IndexWhen::Never, kIndexMinEvents));
}

// A Mode::All trace of `heap`'s random events, allocated at `stack()`s.
template <class StackFn>
Script random_all_trace(uint64_t seed, const testing::RandomHeap& heap, StackFn stack) {
  Script s(format::Mode::All, 4096);
  std::mt19937_64 rng(seed);
  const uint64_t t = testing::add_random_heap(s, rng, heap, stack, [](int, uint64_t) {});
  s.end(t + 5);
  return s;
}

// The index of `s` from its one read (IndexBuilder's), encoded.
std::vector<uint8_t> one_read(const Script& s) {
  ThreadedOverview threaded(s.info, index_query(), Handover::Inline);
  for (const format::Event& e : s.events) threaded.add(e);
  ThreadedOverview::Result got = std::move(threaded).finish();
  return encoded(got.overview, std::move(got.aggregate));
}

// Many freed blocks of a few hundred stacks, whose series widen while most
// stacks have buckets (AggregateBuilder's TallyCells, merged in pairs): the
// same bytes as pass 2, which adds to SeriesBuckets.
TEST(ThreadedOverview, SeriesOfManyFreedBlocksGivesTheBytesOfPassTwo) {
  const testing::RandomHeap heap{.events = 700000, .phase = 20000, .threads = 3, .time_steps = 50,
                                 .min_size = 1, .size_span = 300000};
  const auto shallow_stack = [](auto& r) { return std::vector<uint64_t>{0x1000 + r() % 300, 0x2000 + r() % 7}; };
  const Script s = random_all_trace(7, heap, shallow_stack);
  const auto [overview, expected] = pass_two(s);
  ASSERT_GT(expected.totals[Metric::Freed].blocks, 300000u);
  const std::vector<uint8_t> want = encoded(overview, expected);
  ASSERT_FALSE(want.empty());

  EXPECT_EQ(one_read(s), want);
}

// The same with thousands of stacks, each widening merging every one's buckets.
TEST(ThreadedOverview, SeriesOfManyStacksGivesTheBytesOfPassTwo) {
  const testing::RandomHeap heap{.events = 400000, .phase = 20000, .threads = 2, .time_steps = 50,
                                 .min_size = 1, .size_span = 5000};
  const auto many_stacks = [](auto& r) { return std::vector<uint64_t>{0x100000 + r() % 8000, 0x2000 + r() % 2}; };
  const Script s = random_all_trace(11, heap, many_stacks);
  const auto [overview, expected] = pass_two(s);
  ASSERT_GT(expected.stacks.size(), 5000u);
  ASSERT_GT(expected.totals[Metric::Freed].blocks, 150000u);
  const std::vector<uint8_t> want = encoded(overview, expected);
  ASSERT_FALSE(want.empty());

  EXPECT_EQ(one_read(s), want);
}

// The series of Mode::All blocks of one sample (under 4096 bytes here) on a
// few stacks, living from a tick to most of the run, some still live at the
// end, over runs of several lengths (so the buckets' boundaries fall at
// different times) give pass 2's bytes.
TEST(ThreadedOverview, SeriesOfRunsOfSeveralLengthsGivesTheBytesOfPassTwo) {
  for (uint64_t seed : {21, 22, 23, 24}) {
    const testing::RandomHeap heap{.events = 150000, .phase = 25000, .threads = 3, .time_steps = 40 + 30 * seed,
                                   .min_size = 1, .size_span = 4000};
    const auto few_stacks = [](auto& r) { return std::vector<uint64_t>{0x1000 + r() % 40, 0x2000 + r() % 3}; };
    const Script s = random_all_trace(seed, heap, few_stacks);
    const auto [overview, expected] = pass_two(s);
    ASSERT_GT(expected.totals[Metric::Freed].blocks, 50000u);
    ASSERT_FALSE(expected.totals[Metric::Leaked].empty());
    const std::vector<uint8_t> want = encoded(overview, expected);
    ASSERT_FALSE(want.empty());

    EXPECT_EQ(one_read(s), want) << "seed " << seed;
  }
}

// No block is freed: the series hold the blocks still live at the end only.
TEST(ThreadedOverview, SeriesWithoutFreedBlocksGivesTheBytesOfPassTwo) {
  Script s(format::Mode::All, 4096);
  for (uint64_t i = 0; i < 500; ++i) s.alloc(10 * i + 1, 16 + i, {0x1000 + i % 7, 0x2000});
  s.end(6000);
  const auto [overview, expected] = pass_two(s);
  ASSERT_TRUE(expected.totals[Metric::Freed].empty());
  ASSERT_FALSE(expected.totals[Metric::Leaked].empty());
  const std::vector<uint8_t> want = encoded(overview, expected);
  ASSERT_FALSE(want.empty());

  EXPECT_EQ(one_read(s), want);
}

// A Mode::All block whose n_samples is not 1 (0 and 7 here; the decoder
// passes any value a damaged or hand-made trace holds) keeps it in the
// series' Tallies, so its buckets' sample counts are pass 2's.
TEST(ThreadedOverview, SeriesKeepUnusualSampleCounts) {
  Script s(format::Mode::All, 4096);
  std::vector<format::AllocId> ids;
  for (uint64_t i = 0; i < 3000; ++i) {
    const uint32_t n_samples = i % 3 == 0 ? 0 : i % 5 == 0 ? 7 : 1;
    ids.push_back(s.alloc(10 * i + 1, 16 + i, {0x1000 + i % 40, 0x2000}, 0, n_samples));
    if (i % 2 == 1) s.free(ids[i - 1], 10 * i + 5);
  }
  s.end(40000);
  const auto [overview, expected] = pass_two(s);
  ASSERT_GT(expected.totals[Metric::Freed].blocks, 1000u);
  ASSERT_NE(expected.totals[Metric::Freed].samples, expected.totals[Metric::Freed].blocks);
  const std::vector<uint8_t> want = encoded(overview, expected);
  ASSERT_FALSE(want.empty());
  ThreadedOverview threaded(s.info, index_query(), Handover::Inline);
  for (const format::Event& e : s.events) threaded.add(e);
  ThreadedOverview::Result got = std::move(threaded).finish();
  uint64_t series_samples = 0;
  for (const StackStats& st : got.aggregate.stacks)
    for (const SeriesBucket& b : st.series) series_samples += b.freed.samples;
  EXPECT_EQ(series_samples, expected.totals[Metric::Freed].samples);
  EXPECT_EQ(encoded(got.overview, std::move(got.aggregate)), want);
}

// Stretches of blocks freed where they were allocated (a stack's last
// bucket: settle_tallied's inline case) and of blocks freed apart from their
// allocation (tally_series_apart), with unusual sample counts in both, give
// pass 2's bytes.
TEST(ThreadedOverview, SeriesOfBlocksFreedTogetherAndApartGiveTheBytesOfPassTwo) {
  Script s(format::Mode::All, 4096);
  uint64_t t = 1;
  uint64_t i = 0;
  // 30 blocks of 3 stacks a tick, freed in it or the next one: summed.
  const auto summed = [&](int ticks) {
    for (int tick = 0; tick < ticks; ++tick, t += 2) {
      std::vector<format::AllocId> ids;
      for (int b = 0; b < 30; ++b, ++i) {
        const uint32_t n_samples = i % 97 == 0 ? 7 : 1;
        ids.push_back(s.alloc(t, 16 + i % 50, {0x1000 + static_cast<uint64_t>(b % 3), 0x2000}, 0, n_samples));
      }
      for (uint64_t later : {0, 1})
        for (size_t b = later; b < ids.size(); b += 2) s.free(ids[b], t + later);
    }
  };
  // 30 blocks allocated at 30 times, freed together: nothing to sum.
  const auto apart = [&](int groups) {
    for (int g = 0; g < groups; ++g) {
      std::vector<format::AllocId> ids;
      for (int b = 0; b < 30; ++b, ++i, ++t) {
        const uint32_t n_samples = i % 89 == 0 ? 0 : i % 83 == 0 ? 5 : 1;
        ids.push_back(s.alloc(t, 16 + i % 50, {0x3000 + i % 5, 0x2000}, 0, n_samples));
      }
      for (format::AllocId id : ids) s.free(id, t);
      ++t;
    }
  };
  summed(700);
  apart(3000);  // a window, then a pause of 65536 blocks, twice
  summed(3000);  // the second pause ends in here
  s.end(t + 10);
  const auto [overview, expected] = pass_two(s);
  ASSERT_GT(expected.totals[Metric::Freed].blocks, 200000u);
  ASSERT_NE(expected.totals[Metric::Freed].samples, expected.totals[Metric::Freed].blocks);
  const std::vector<uint8_t> want = encoded(overview, expected);
  ASSERT_FALSE(want.empty());

  EXPECT_EQ(one_read(s), want);
}

// A block of a series test: allocated `at`, freed `until` (never: kNever).
constexpr uint64_t kNever = ~uint64_t{0};
struct TimedBlock {
  uint64_t at, until, size, stack;
};

// `blocks`' allocations and frees added to `s` in time order, then its end
// `after` the last of them.
void add_in_time_order(Script& s, const std::vector<TimedBlock>& blocks, uint64_t after) {
  std::vector<std::tuple<uint64_t, int, size_t>> order;  // (time, 0 alloc / 1 free, block)
  for (size_t b = 0; b < blocks.size(); ++b) {
    order.emplace_back(blocks[b].at, 0, b);
    if (blocks[b].until != kNever) order.emplace_back(blocks[b].until, 1, b);
  }
  std::sort(order.begin(), order.end());
  std::vector<format::AllocId> ids(blocks.size());
  uint64_t t = 0;
  for (const auto& [time, kind, b] : order) {
    if (kind == 0) {
      ids[b] = s.alloc(time, blocks[b].size, {blocks[b].stack, 0x2000});
    } else {
      s.free(ids[b], time);
    }
    t = time;
  }
  s.end(t + after);
}

// Times past 2^40 ns with gaps of hours (the series widen by many doublings
// at once), lifetimes of none to hours, sizes past 2^32, several blocks of a
// stack at one time, give pass 2's bytes.
TEST(ThreadedOverview, SeriesOfWideTimesAndSizesGivesTheBytesOfPassTwo) {
  Script s(format::Mode::All, 4096);
  std::vector<TimedBlock> blocks;
  uint64_t t = uint64_t{1} << 41;
  for (uint64_t i = 0; i < 20000; ++i) {
    // Several blocks of one stack at one time (summed into one entry), gaps
    // between frees of none to hours, lifetimes of none to hours.
    if (i % 4 != 0) t += i % 1000 == 999 ? (uint64_t{1} << 34) : i % 3;
    const uint64_t lifetime = i % 5 == 0 ? 0 : i % 5 == 1 ? i : i % 5 == 2 ? (uint64_t{1} << 36) + i : 1000 * i;
    const uint64_t size = i % 11 == 0 ? (uint64_t{1} << 33) + i : i % 3 == 0 ? 300 + i : 1 + i % 100;
    blocks.push_back({t, t + lifetime, size, 0x1000 + (i * 7919) % 400});
  }
  add_in_time_order(s, blocks, 10);
  const auto [overview, expected] = pass_two(s);
  ASSERT_GT(expected.totals[Metric::Freed].blocks, 19000u);
  const std::vector<uint8_t> want = encoded(overview, expected);
  ASSERT_FALSE(want.empty());

  EXPECT_EQ(one_read(s), want);
}

// The series' width is a power of two of ns whatever the trace's tick:
// traces whose times are whole ticks of 32 µs, of 3 µs (the header takes any
// unit) and of 1 µs, with free steps and lifetimes of none to hours of ticks,
// several blocks freed at one time, and the same with one time that is not a
// whole tick halfway, exact and sampled, give pass 2's bytes.
TEST(ThreadedOverview, SeriesInTicksOfAnyUnitGivesTheBytesOfPassTwo) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (uint32_t unit_us : {32u, 3u, 1u}) {
      for (bool stray : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode) << ", unit " << unit_us << " µs"
                                        << (stray ? ", a stray time" : ""));
        Script s(mode, 4096);
        s.info.time_unit_us = unit_us;
        const uint64_t tick = uint64_t{unit_us} * 1000;
        std::vector<TimedBlock> blocks;
        uint64_t t = 5 * tick;
        for (uint64_t i = 0; i < 12000; ++i) {
          if (i % 3 != 0) t += (i % 997 == 996 ? (uint64_t{1} << 30) : i % 4) * tick;
          const uint64_t lifetime = (i % 4 == 0 ? 0 : i % 4 == 1 ? i % 200 : i % 4 == 2 ? (uint64_t{1} << 28) + i : 3) * tick;
          blocks.push_back({t, t + lifetime, 1 + i % 300, 0x1000 + (i * 7919) % 300});
        }
        if (stray) blocks[6000].until += 7;  // not a whole tick
        add_in_time_order(s, blocks, tick);
        const auto [overview, expected] = pass_two(s);
        ASSERT_GT(expected.totals[Metric::Freed].blocks, 0u);
        const std::vector<uint8_t> want = encoded(overview, expected);
        ASSERT_FALSE(want.empty());

        EXPECT_EQ(one_read(s), want);
      }
    }
  }
}

// Blocks on 13 stacks for a trace whose last time is `end`, in buckets of
// `width` (the width it ends with): at bucket edges (and a ns before them),
// freed at once, in the next bucket, across most of the trace (every doubling
// of the series' width on the way), or never.
Script edge_trace(format::Mode mode, uint64_t width, uint64_t end) {
  Script s(mode, 4096);
  std::vector<TimedBlock> blocks;
  const uint64_t buckets = end / width + 1;
  for (uint64_t i = 0; i < 4000; ++i) {
    const uint64_t edge = (i * 37 % buckets) * width;
    const uint64_t at = std::min(end - 1, i % 3 == 0 || edge == 0 ? edge : edge - 1);
    const uint64_t until = i % 4 == 0 ? at : i % 4 == 1 ? std::min(at + width, end - 1) : i % 4 == 2 ? end - 1 : kNever;
    blocks.push_back({at, until, 1 + i % 5000, 0x1000 + i % 13});
  }
  blocks.push_back({end - 1, kNever, 8, 0x1000});  // the last event at end - 1
  add_in_time_order(s, blocks, 1);
  return s;
}

// Traces that end at and around the series' widths' edges (100 buckets of
// 2^j ns hold [0, 100·2^j − 1]; one ns more doubles the width), exact and
// sampled: the one read gives pass 2's bytes, and both end at the rule's
// width (series_width), which covers the trace in over half the buckets.
TEST(ThreadedOverview, SeriesWidenedAtTheirEdgesGiveTheBytesOfPassTwo) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (unsigned j : {0u, 3u, 17u, 30u}) {
      for (int past : {-1, 0, 1}) {
        const uint64_t width = uint64_t{1} << j;
        const uint64_t end = kIndexSeriesBuckets * width + past;
        SCOPED_TRACE(::testing::Message() << "mode " << static_cast<int>(mode) << ", end " << end);
        const Script s = edge_trace(mode, width, end);
        const auto [overview, expected] = pass_two(s);
        ASSERT_EQ(overview.duration_ns, end);
        const uint64_t want_width = past < 0 ? width : 2 * width;
        EXPECT_EQ(series_width(end, kIndexSeriesBuckets), want_width);
        EXPECT_EQ(expected.series_bucket_ns, want_width);
        EXPECT_EQ(series_buckets_covering(expected, end), end / want_width + 1);
        EXPECT_GT(series_buckets_covering(expected, end), kIndexSeriesBuckets / 2);
        ASSERT_FALSE(expected.totals[Metric::Leaked].empty());
        const std::vector<uint8_t> want = encoded(overview, expected);
        ASSERT_FALSE(want.empty());

        EXPECT_EQ(one_read(s), want);
      }
    }
  }
}

// The series against their definition, in every mode (pass 2, the one read,
// the one pass): each block is allocated in the bucket of its allocation
// time / the width, freed in that of its free time, leaked in that of its
// allocation, with the width the rule's (series_width). A merge that lost a
// bucket, or merged the wrong neighbours, fails it.
TEST(AggregateSeries, BucketsHoldTheBlocksOfTheirTimes) {
  for (uint64_t end : {uint64_t{99}, uint64_t{100} << 20, (uint64_t{100} << 20) + 12345}) {
    SCOPED_TRACE(::testing::Message() << "end " << end);
    const uint64_t width = series_width(end, kIndexSeriesBuckets);
    Script s(format::Mode::All, 4096);
    std::vector<TimedBlock> blocks;
    std::mt19937_64 rng(end);
    for (uint64_t i = 0; i < 5000; ++i) {
      const uint64_t at = rng() % end;
      const uint64_t until = i % 5 == 0 ? kNever : std::min(end - 1, at + (i % 2 ? rng() % (end - at) : rng() % 300));
      blocks.push_back({at, until, 1 + i % 700, 0x1000 + i % 9});
    }
    blocks.push_back({end - 1, kNever, 8, 0x1000});
    add_in_time_order(s, blocks, 1);
    // By stack (its frame) and bucket: blocks and bytes allocated, freed, leaked.
    using Cells = std::map<uint64_t, std::array<uint64_t, 6>>;
    std::map<uint64_t, Cells> want;
    for (const TimedBlock& b : blocks) {
      std::array<uint64_t, 6>& at = want[b.stack][b.at / width];
      at[0] += 1;
      at[1] += b.size;
      std::array<uint64_t, 6>& until = want[b.stack][b.until == kNever ? b.at / width : b.until / width];
      until[b.until == kNever ? 4 : 2] += 1;
      until[b.until == kNever ? 5 : 3] += b.size;
    }
    QueryArgs args;
    args.series_buckets = kIndexSeriesBuckets;
    ThreadedOverview threaded(s.info, index_query(), Handover::Inline);
    for (const format::Event& e : s.events) threaded.add(e);
    const Aggregate aggregates[] = {pass_two(s).aggregate, std::move(threaded).finish().aggregate,
                                    s.run(args, Passes::Fewest).aggregate};
    for (const Aggregate& a : aggregates) {
      EXPECT_EQ(a.series_bucket_ns, width);
      std::map<uint64_t, Cells> got;
      for (uint32_t i = 0; i < a.stacks.size(); ++i) {
        Cells& cells = got[a.frames(StackId{i})[0]];
        for (const SeriesBucket& b : a.stacks[i].series) {
          EXPECT_LT(b.index, series_buckets_covering(a, end));
          cells[b.index] = {b.allocated.blocks, b.allocated.bytes, b.freed.blocks, b.freed.bytes, b.leaked.blocks,
                            b.leaked.bytes};
        }
      }
      EXPECT_EQ(got, want);
    }
  }
}

// The peak moves: a site's blocks freed before a later, higher peak are not
// live at it, those freed after it are; the thread's figures follow.
TEST(ThreadedOverview, PeakIsTheLastNewMaximum) {
  Script s(format::Mode::All, 4096);
  const std::vector<uint64_t> a_site{0x10, 0x20}, b_site{0x30};
  const format::AllocId a0 = s.alloc(1, 100, a_site);
  const format::AllocId a1 = s.alloc(2, 100, a_site);  // first maximum, 200
  s.free(a0, 3);                                        // freed before the final peak: not at it
  s.alloc(4, 500, b_site, 1);                           // new maximum, 600: the final peak
  s.free(a1, 5);                                        // freed after the final peak: at it
  s.alloc(6, 50, b_site, 1);                            // after the peak: not at it
  s.end(7);
  ThreadedOverview threaded(s.info, index_query());
  for (const format::Event& e : s.events) threaded.add(e);
  const ThreadedOverview::Result got = std::move(threaded).finish();
  ASSERT_EQ(got.aggregate.stacks.size(), 2u);
  EXPECT_EQ(got.aggregate.stacks[0].metrics[Metric::Peak].bytes, 100u);
  EXPECT_EQ(got.aggregate.stacks[1].metrics[Metric::Peak].bytes, 500u);
  EXPECT_EQ(got.aggregate.totals[Metric::Peak].bytes, got.overview.peak.live.bytes);
  ASSERT_EQ(got.aggregate.threads.size(), 2u);
  EXPECT_EQ(got.aggregate.threads[0].metrics[Metric::Peak].bytes, 100u);
  EXPECT_EQ(got.aggregate.threads[1].metrics[Metric::Peak].bytes, 500u);
}

TEST(ThreadedOverview, GivesTheBytesOfOverviewBuilder) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (uint64_t seed : {5, 6}) {
      const Script s = random_trace(mode, seed, 2 * static_cast<int>(EventPipe::kBatch) * static_cast<int>(seed) + 3);
      OverviewBuilder serial(s.info);
      ThreadedOverview worker(s.info, Handover::Worker), inline_(s.info, Handover::Inline);
      for (const format::Event& e : s.events) {
        serial.add(e);
        worker.add(e);
        inline_.add(e);
      }
      const Overview want = std::move(serial).finish();
      ASSERT_GT(want.markers.size(), 1u);  // rare events were interleaved
      const std::vector<uint8_t> bytes = encoded(want, Aggregate{});
      ASSERT_GT(bytes.size(), 1000u);  // the heap series is in there
      for (ThreadedOverview* threaded : {&worker, &inline_}) {
        const Overview got = std::move(*threaded).finish().overview;
        EXPECT_EQ(encoded(got, Aggregate{}), bytes) << "seed " << seed;
        EXPECT_EQ(got.events, want.events);
      }
    }
  }
}

// The Aggregate clamps each Alloc's and Free's time once for both builders,
// and the OverviewBuilder it drives clamps the other events' with the same
// clock (copied in and out), and counts the events from its Alloc and Free
// counts: times that step back among every kind of event, an unknown Free,
// and a rare event as the last, give the Overview of OverviewBuilder::add
// alone (its clamped times, inversions, duration and event count), in both
// modes, by both hand-overs and by the one pass.
TEST(ThreadedOverview, TimesSteppingBackGiveTheOverviewOfOverviewBuilder) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    Script s(mode, 64);
    s.thread(1, 50, 101, "worker");
    const auto a = s.alloc(100, 10, {0x1});
    s.marker(90, "back");  // clamped to 100 by the Overview
    const auto b = s.alloc(95, 20, {0x2}, 1);
    s.rss(120, 4096);
    s.free(a, 110);
    s.thread(2, 105, 102, "late");  // clamped to 120
    s.alloc(130, 30, {0x1}, 2);
    s.free(format::AllocId{999}, 125, 0);  // unknown, and clamped
    s.free(b, 140, 1);
    s.marker(135, "last");
    OverviewBuilder serial(s.info);
    for (const format::Event& e : s.events) serial.add(e);
    const Overview want = std::move(serial).finish();
    ASSERT_EQ(want.time_inversions, 7u);  // (a thread's name has its start's time)
    ASSERT_EQ(want.events, s.events.size());
    ASSERT_EQ(want.markers.size(), 2u);
    EXPECT_EQ(want.markers[0].time_ns, 100u);
    OverviewBuilder one_pass(s.info);
    {
      reader::SymbolTable no_symbols;
      AggregateBuilder aggregate(one_pass, s.info, no_symbols, index_query());
      for (const format::Event& e : s.events) aggregate.add(e);
      std::move(aggregate).finish();
    }
    std::vector<Overview> got;
    got.push_back(std::move(one_pass).finish());
    for (Handover handover : {Handover::Worker, Handover::Inline}) {
      ThreadedOverview threaded(s.info, index_query(), handover);
      for (const format::Event& e : s.events) threaded.add(e);
      got.push_back(std::move(threaded).finish().overview);
    }
    for (const Overview& o : got) {
      EXPECT_EQ(encoded(o, Aggregate{}), encoded(want, Aggregate{})) << "mode " << static_cast<int>(mode);
      EXPECT_EQ(o.events, want.events);
      EXPECT_EQ(o.alloc_events, want.alloc_events);
      EXPECT_EQ(o.free_events, want.free_events);
      EXPECT_EQ(o.unmatched_frees, want.unmatched_frees);
      EXPECT_EQ(o.time_inversions, want.time_inversions);
      EXPECT_EQ(o.duration_ns, want.duration_ns);
      ASSERT_EQ(o.markers.size(), want.markers.size());
      for (size_t i = 0; i < o.markers.size(); ++i) EXPECT_EQ(o.markers[i].time_ns, want.markers[i].time_ns);
      ASSERT_EQ(o.threads.size(), want.threads.size());
      for (size_t i = 0; i < o.threads.size(); ++i) EXPECT_EQ(o.threads[i].start_ns, want.threads[i].start_ns);
    }
  }
}

// Both hand-overs, and the switch from one to the other halfway (as a
// follower's read does when the program exits), with the reader's backtrace
// keys and without, over a trace from the real encoder: the same index bytes.
TEST(ThreadedOverview, HandoversAndKeysChangeNothing) {
  enum class Way { Worker, Inline, InlineThenWorker };
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    const reader::testing::Stream s =
        reader::testing::make_stream(9, {.mode = mode, .events = 3 * EventPipe::kBatch + 5, .max_depth = 80});
    std::vector<uint8_t> want;
    for (Way way : {Way::Worker, Way::Inline, Way::InlineThenWorker}) {
      for (bool keys : {false, true}) {
        auto r = reader::Reader::from_bytes(s.bytes);
        ASSERT_TRUE(r.ok()) << r.error().message;
        ThreadedOverview threaded((*r)->info(), index_query(), way == Way::Worker ? Handover::Worker : Handover::Inline);
        uint64_t n = 0;
        while (const format::Event* e = (*r)->next()) {
          if (way == Way::InlineThenWorker && n++ == s.allocs) threaded.use_worker();
          threaded.add(*e, keys ? (*r)->backtrace_key() : reader::BacktraceKey{});
        }
        ASSERT_FALSE((*r)->error());
        ThreadedOverview::Result got = std::move(threaded).finish();
        ASSERT_GT(got.aggregate.stacks.size(), 10u);
        const std::vector<uint8_t> bytes = encoded(got.overview, std::move(got.aggregate));
        if (want.empty()) want = bytes;
        EXPECT_EQ(bytes, want) << "mode " << static_cast<int>(mode) << " way " << static_cast<int>(way)
                               << " keys " << keys;
      }
    }
  }
}

TEST(ThreadedOverview, DestroyedUnfinishedStopsItsWorker) {
  const Script s = random_trace(format::Mode::All, 4, 20000);
  QueryArgs args;
  ThreadedOverview aggregating(s.info, resolve(args, Overview{}).value(), Handover::Worker);
  for (const format::Event& e : s.events) aggregating.add(e);
  ThreadedOverview plain(s.info, Handover::Worker);
  for (const format::Event& e : s.events) plain.add(e);
  // Leaving the scope must join the workers (a damaged input never asks for the index).
}


// A damaged trace's thread id past any real thread (the largest a varint can
// name): its blocks are counted per site, with no row for the thread, in every
// mode (the thread tables once grew to id + 1, which wrapped to 0).
TEST(AggregateBuilder, AThreadIdPastTheLimitGetsNoRow) {
  Script s(format::Mode::All);
  const format::AllocId a = s.alloc(1, 100, {0x10}, UINT32_MAX);
  s.alloc(2, 50, {0x20}, 0);
  s.free(a, 3, UINT32_MAX);
  s.alloc(4, 30, {0x10}, UINT32_MAX);
  s.end(5);
  QueryArgs args;
  args.series_buckets = kIndexSeriesBuckets;
  for (Passes passes : {Passes::Fewest, Passes::Two}) {
    QueryArgs plain;
    const Model m = s.run(passes == Passes::Fewest ? plain : args, passes);
    EXPECT_EQ(m.aggregate.totals[Metric::Allocated].bytes, 180u);
    EXPECT_EQ(m.aggregate.totals[Metric::Leaked].bytes, 80u);
    ASSERT_EQ(m.aggregate.threads.size(), 1u);
    EXPECT_EQ(m.aggregate.threads[0].thread.value, 0u);
  }
  ThreadedOverview threaded(s.info, index_query());
  for (const format::Event& e : s.events) threaded.add(e);
  const ThreadedOverview::Result got = std::move(threaded).finish();
  EXPECT_EQ(got.aggregate.totals[Metric::Allocated].bytes, 180u);
  EXPECT_EQ(got.aggregate.totals[Metric::Peak].bytes, 150u);
  ASSERT_EQ(got.aggregate.threads.size(), 1u);
  // The thread has no slot of its latest allocation either (the streaming
  // pass's immediate test reads one only below the limit): not immediate.
  EXPECT_EQ(got.aggregate.immediate.blocks, 0u);
}

}  // namespace
}  // namespace memloupe::analysis
