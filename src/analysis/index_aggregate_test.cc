// ThreadedOverview and AggregateLog's replay against OverviewBuilder::add and
// AggregateBuilder::add over the same events: the encoded index (every count,
// f64 bits included, every heap point and series bucket, the stacks in order)
// must be the same bytes.
#include "analysis/index_aggregate.h"

#include <gtest/gtest.h>

#include <random>

#include "analysis/index.h"
#include "support/test_script.h"

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

std::vector<uint8_t> encoded(const Overview& overview, Aggregate aggregate) {
  Index index;
  index.overview = overview;
  index.aggregate = std::move(aggregate);
  std::optional<std::vector<uint8_t>> bytes = encode_index(index);
  return bytes ? *bytes : std::vector<uint8_t>{};
}

// The one read: the Overview on its worker, the events logged, then the
// Aggregate replayed from the log, as IndexBuilder does.
TEST(AggregateLog, ReplayGivesTheBytesOfAggregateBuilder) {
  for (format::Mode mode : {format::Mode::All, format::Mode::Sampled}) {
    for (uint64_t seed : {1, 2, 3}) {
      // More events than a few batches and log blocks, and a seed whose trace ends mid-batch.
      const Script s = random_trace(mode, seed, 3 * static_cast<int>(EventPipe::kBatch) * static_cast<int>(seed) + 17);
      OverviewBuilder ob(s.info);
      for (const format::Event& e : s.events) ob.add(e);
      const Overview overview = std::move(ob).finish();
      QueryArgs args;
      args.series_buckets = kIndexSeriesBuckets;
      const Query query = resolve(args, overview).value();
      reader::SymbolTable no_symbols;
      AggregateBuilder serial(overview, no_symbols, query);
      for (const format::Event& e : s.events) serial.add(e);
      const Aggregate expected = std::move(serial).finish();

      StackTable stacks;
      AggregateLog log;
      ThreadedOverview threaded(s.info, stacks, log);
      for (const format::Event& e : s.events) threaded.add(e);
      const Overview got_overview = std::move(threaded).finish();
      ASSERT_GT(log.bytes(), 0u);
      AggregateBuilder replayed(got_overview, no_symbols, query);
      log.replay(replayed, stacks);
      const Aggregate got = std::move(replayed).finish();

      ASSERT_GT(expected.stacks.size(), 100u);
      ASSERT_GT(expected.series_buckets, 0u);
      const std::vector<uint8_t> want = encoded(overview, expected);
      ASSERT_FALSE(want.empty());
      EXPECT_EQ(encoded(got_overview, got), want) << "mode " << static_cast<int>(mode) << " seed " << seed;
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

TEST(ThreadedOverview, DestroyedUnfinishedStopsItsWorker) {
  const Script s = random_trace(format::Mode::All, 4, 20000);
  StackTable stacks;
  AggregateLog log;
  ThreadedOverview logging(s.info, stacks, log);
  for (const format::Event& e : s.events) logging.add(e);
  ThreadedOverview plain(s.info);
  for (const format::Event& e : s.events) plain.add(e);
  // Leaving the scope must join the workers (a damaged input never asks for the index).
}

}  // namespace
}  // namespace memloupe::analysis
