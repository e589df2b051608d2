// ThreadedOverview and ThreadedAggregate against OverviewBuilder::add and
// AggregateBuilder::add over the same events: the encoded index (every count,
// f64 bits included, every heap point and series bucket, the stacks in order)
// must be the same bytes.
#include "analysis/index_aggregate.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/index.h"
#include "analysis/test_script.h"

namespace memloupe::analysis {
namespace {

using testing::Script;

// A trace with many distinct deep stacks (so batches carry new stacks' frames),
// several threads, rare events between, and blocks alive at the end.
Script random_trace(format::Mode mode, uint64_t seed, int events) {
  Script s(mode, 4096);
  std::mt19937_64 rng(seed);
  std::vector<std::pair<format::AllocId, uint32_t>> live;
  uint64_t t = 0;
  for (int i = 0; i < events; ++i) {
    t += rng() % 4;
    const uint32_t thread = static_cast<uint32_t>(rng() % 5);
    if (i % 997 == 0) s.rss(t, rng() % 100000);
    if (i % 4999 == 0) s.marker(t, "m" + std::to_string(i));
    const bool grow = (i / 5000) % 2 == 0 ? rng() % 3 != 0 : rng() % 3 == 0;
    if (grow || live.empty()) {
      const uint64_t size = 1 + rng() % 9000;
      std::vector<uint64_t> stack(rng() % 40);
      for (size_t j = 0; j < stack.size(); ++j) stack[j] = 0x1000 * (j + 1) + rng() % (j % 3 + 1);
      live.emplace_back(s.alloc(t, size, stack, thread, 1 + static_cast<uint32_t>(size / 4096)), thread);
    } else {
      const size_t k = rng() % live.size();
      s.free(live[k].first, t, rng() % 2 ? live[k].second : thread);
      live[k] = live.back();
      live.pop_back();
    }
  }
  s.end(t + 5);
  return s;
}

std::vector<uint8_t> encoded(const Overview& overview, Aggregate aggregate) {
  Index index;
  index.overview = overview;
  index.aggregate = std::move(aggregate);
  std::optional<std::vector<uint8_t>> bytes = encode_index(index);
  return bytes ? *bytes : std::vector<uint8_t>{};
}

TEST(ThreadedAggregate, GivesTheBytesOfAggregateBuilder) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (uint64_t seed : {1, 2, 3}) {
      // More events than a few batches, and a seed whose trace ends mid-batch.
      const Script s = random_trace(mode, seed, 3 * static_cast<int>(EventPipe::kBatch) * static_cast<int>(seed) + 17);
      OverviewBuilder ob(s.info);
      for (const format::Event& e : s.events) ob.add(e);
      const Overview overview = std::move(ob).finish();
      QueryArgs args;
      args.series_buckets = kIndexSeriesBuckets;
      const Query query = resolve(args, overview).value();

      reader::SymbolTable no_symbols;
      AggregateBuilder serial(overview, no_symbols, query);
      ThreadedAggregate threaded(overview, query);
      for (const format::Event& e : s.events) {
        serial.add(e);
        threaded.add(e);
      }
      const Aggregate expected = std::move(serial).finish();
      const Aggregate got = std::move(threaded).finish();
      ASSERT_GT(expected.stacks.size(), 100u);
      const std::vector<uint8_t> want = encoded(overview, expected);
      ASSERT_FALSE(want.empty());
      EXPECT_EQ(encoded(overview, got), want) << "mode " << static_cast<int>(mode) << " seed " << seed;
    }
  }
}

TEST(ThreadedOverview, GivesTheBytesOfOverviewBuilder) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (uint64_t seed : {5, 6}) {
      const Script s = random_trace(mode, seed, 2 * static_cast<int>(EventPipe::kBatch) * static_cast<int>(seed) + 3);
      OverviewBuilder serial(s.info);
      ThreadedOverview threaded(s.info);
      for (const format::Event& e : s.events) {
        serial.add(e);
        threaded.add(e);
      }
      const Overview want = std::move(serial).finish();
      const Overview got = std::move(threaded).finish();
      ASSERT_GT(want.markers.size(), 1u);  // rare events were interleaved
      const std::vector<uint8_t> bytes = encoded(want, Aggregate{});
      ASSERT_GT(bytes.size(), 1000u);  // the heap series is in there
      EXPECT_EQ(encoded(got, Aggregate{}), bytes) << "seed " << seed;
      EXPECT_EQ(got.events, want.events);
    }
  }
}

TEST(ThreadedAggregate, DestroyedUnfinishedStopsItsWorker) {
  const Script s = random_trace(format::Mode::All, 4, 20000);
  OverviewBuilder ob(s.info);
  for (const format::Event& e : s.events) ob.add(e);
  const Overview overview = std::move(ob).finish();
  const Query query = resolve(QueryArgs{}, overview).value();
  ThreadedAggregate threaded(overview, query);
  for (const format::Event& e : s.events) threaded.add(e);
  ThreadedOverview overview_threaded(s.info);
  for (const format::Event& e : s.events) overview_threaded.add(e);
  // Leaving the scope must join the workers (a damaged input never asks for the index).
}

}  // namespace
}  // namespace memloupe::analysis
