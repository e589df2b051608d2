#include "replay/prepare.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "support/test_trace.h"

namespace memloupe::replay {
namespace {

using format::Func;
using testing::TestTrace;

Expected<Prepared> prepare_bytes(std::vector<uint8_t> bytes, PrepareOptions options = {}) {
  auto reader = reader::Reader::from_bytes(std::move(bytes));
  EXPECT_TRUE(reader) << reader.error().message;
  return prepare(**reader, options);
}

// Checks, without running anything, that the streams order every pair of ops
// that must be ordered: an op that frees or reallocates a block comes after
// the op that made it, and an allocation into a slot comes after the op that
// emptied it. "After" means earlier in the same thread, or covered by a Wait
// on the other thread's progress that comes before it in its own thread.
// Returns the number of pairs it checked across threads.
size_t check_order(const Prepared& p) {
  struct Event {
    uint32_t thread;
    uint32_t op;
  };
  // Replays the streams in an order the waits allow (always run the first
  // thread whose next op is runnable), remembering per slot who touched it last.
  const size_t n = p.threads.size();
  std::vector<uint32_t> next(n, 0);
  std::map<uint32_t, Event> last_touch;  // slot -> last op that filled or emptied it
  size_t cross = 0;
  for (;;) {
    bool progressed = false, all_done = true;
    for (uint32_t t = 0; t < n; ++t) {
      const auto& ops = p.threads[t];
      while (next[t] < ops.size()) {
        all_done = false;
        const Op& op = ops[next[t]];
        if (op.kind == OpKind::Wait) {
          // The op waited for publishes, so the wait ends as soon as it has run.
          EXPECT_TRUE(p.threads[op.slot][op.size - 1].flags & kPublish);
          if (next[op.slot] < op.size) break;  // not yet
          ++next[t];
          progressed = true;
          continue;
        }
        const auto it = last_touch.find(op.slot);
        if (it != last_touch.end() && it->second.thread != t) {
          // The order the waits allowed put the other thread's op first; it
          // must be guaranteed, not luck: some Wait before this op covers it.
          bool covered = false;
          for (uint32_t i = 0; i < next[t]; ++i) {
            const Op& w = ops[i];
            if (w.kind == OpKind::Wait && w.slot == it->second.thread && w.size > it->second.op) covered = true;
          }
          EXPECT_TRUE(covered) << "thread " << t << " op " << next[t] << " slot " << op.slot;
          ++cross;
        }
        last_touch[op.slot] = Event{t, next[t]};
        ++next[t];
        progressed = true;
      }
    }
    if (all_done) break;
    if (!progressed) {
      ADD_FAILURE() << "the waits deadlock";
      break;
    }
  }
  return cross;
}

TEST(Prepare, RefusesASampledTrace) {
  TestTrace t(format::Mode::Sampled);
  t.alloc(0, 100);
  auto p = prepare_bytes(t.finish());
  ASSERT_FALSE(p);
  EXPECT_NE(p.error().message.find("memloupe run --all"), std::string::npos) << p.error().message;
}

TEST(Prepare, CountsCallsThreadsAndTheIdealPeak) {
  TestTrace t;
  const auto a = t.alloc(0, 100);
  const auto b = t.alloc(0, 200, Func::Calloc);
  t.free(a, 0);                       // live 200
  const auto b2 = t.realloc(b, 0, 500);  // live 500
  const auto c = t.alloc(1, 50);      // live 550: the peak
  t.free(c, 1);
  t.free(b2, 0);
  t.rss(12345);
  auto p = prepare_bytes(t.finish());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->facts.threads, 2u);
  EXPECT_EQ(p->facts.alloc_calls, 4u);  // a, b, the realloc, c
  EXPECT_EQ(p->facts.free_calls, 3u);   // a, c, b2 (the realloc's own free is not one)
  EXPECT_EQ(p->facts.realloc_calls, 1u);
  EXPECT_EQ(p->facts.ideal_peak_bytes, 550u);
  EXPECT_EQ(p->facts.recorded_peak_rss_bytes, 12345u);
  EXPECT_EQ(p->facts.cross_thread_frees, 0u);
  EXPECT_FALSE(p->facts.damage);
  // The RSS sample becomes a probe after the call before it (thread 0's last free).
  ASSERT_EQ(p->facts.rss_points.size(), 1u);
  EXPECT_EQ(p->facts.rss_points[0].rss_bytes, 12345u);
  EXPECT_EQ(p->facts.rss_points[0].events, 8u);  // 6 calls, the realloc counting 2 events
  EXPECT_EQ(p->facts.rss_points[0].max_live_blocks, 2u);
  const auto& t0 = p->threads[0];
  ASSERT_EQ(t0.size(), 6u);
  EXPECT_EQ(t0[5].kind, OpKind::Probe);
  EXPECT_EQ(t0[5].slot, 0u);
  EXPECT_EQ(t0[3].kind, OpKind::Realloc);
  EXPECT_EQ(t0[3].slot, t0[1].slot);  // the realloc'd block stays in b's slot
  EXPECT_EQ(t0[3].size, 500u);
  EXPECT_EQ(static_cast<Func>(t0[1].func), Func::Calloc);
}

TEST(Prepare, SizedAndAlignedFreesGetTheAllocationsSizeAndAlignment) {
  TestTrace t;
  const auto a = t.alloc(0, 48, Func::New);
  const auto b = t.alloc(0, 256, Func::NewAligned, 64);
  const auto c = t.alloc(0, 100, Func::Memalign, 48);  // not a power of two: rounded up
  t.free(a, 0, Func::DeleteSized);
  t.free(b, 0, Func::DeleteSizedAligned);
  t.free(c, 0);
  auto p = prepare_bytes(t.finish());
  ASSERT_TRUE(p) << p.error().message;
  const auto& ops = p->threads[0];
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_EQ(ops[3].kind, OpKind::Free);
  EXPECT_EQ(ops[3].size, 48u);
  EXPECT_EQ(static_cast<Func>(ops[3].func), Func::DeleteSized);
  EXPECT_EQ(ops[4].size, 256u);
  EXPECT_EQ(ops[4].align_log2, 6u);
  EXPECT_EQ(ops[2].align_log2, 6u);  // 48 -> 64
}

TEST(Prepare, ReallocToZeroIsReplayedAsAFree) {
  TestTrace t;
  const auto a = t.alloc(0, 100);
  t.free(a, 0, Func::Realloc);  // what the recorder writes for realloc(p, 0)
  const auto b = t.alloc(0, 10);
  t.free(b, 0);
  auto p = prepare_bytes(t.finish());
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->facts.free_calls, 2u);
  EXPECT_EQ(p->facts.realloc_calls, 0u);
  EXPECT_EQ(p->threads[0][1].kind, OpKind::Free);
  EXPECT_EQ(static_cast<Func>(p->threads[0][1].func), Func::Realloc);
}

TEST(Prepare, ACrossThreadFreeWaitsForItsAllocation) {
  TestTrace t;
  const auto a = t.alloc(0, 100);
  t.alloc(0, 100);
  t.alloc(1, 10);  // thread 1 starts after thread 0's two calls
  const auto d = t.alloc(0, 100);
  t.free(a, 1);
  t.free(d, 1);
  auto p = prepare_bytes(t.finish(), PrepareOptions{0});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(p->facts.cross_thread_frees, 2u);
  const auto& t1 = p->threads[1];
  // Wait(thread 0, 2) for its start (it covers `a` too), alloc, free a,
  // Wait(thread 0, 3) for d, free d.
  ASSERT_EQ(t1.size(), 5u);
  EXPECT_EQ(t1[0].kind, OpKind::Wait);
  EXPECT_EQ(t1[0].slot, 0u);
  EXPECT_EQ(t1[0].size, 2u);
  EXPECT_EQ(t1[2].kind, OpKind::Free);
  EXPECT_EQ(t1[3].kind, OpKind::Wait);
  EXPECT_EQ(t1[3].size, 3u);
  EXPECT_EQ(t1[4].kind, OpKind::Free);
  EXPECT_TRUE(p->threads[0][2].flags & kPublish);
  EXPECT_FALSE(p->threads[0][0].flags & kPublish);  // nobody waits for it alone
  EXPECT_EQ(check_order(*p), 2u);
}

// Seeded random traces: four threads, blocks freed and reallocated by random
// threads, with and without windows.
TEST(Prepare, RandomCrossThreadTracesAreOrderedWithoutDeadlock) {
  for (uint64_t window : {uint64_t{0}, uint64_t{1}, uint64_t{16}, uint64_t{1024}}) {
    for (uint32_t seed = 1; seed <= 5; ++seed) {
      std::mt19937_64 rng(seed);
      TestTrace t;
      std::vector<format::AllocId> live;
      uint64_t allocs = 0, frees = 0;
      for (int i = 0; i < 3000; ++i) {
        const uint32_t thread = static_cast<uint32_t>(rng() % 4);
        const unsigned what = static_cast<unsigned>(rng() % 10);
        if (what < 5 || live.empty()) {
          live.push_back(t.alloc(thread, 1 + rng() % 5000));
          ++allocs;
        } else {
          const size_t k = rng() % live.size();
          if (what < 8) {
            t.free(live[k], thread);
            live[k] = live.back();
            live.pop_back();
            ++frees;
          } else {
            live[k] = t.realloc(live[k], thread, 1 + rng() % 9000);
            ++allocs;
          }
        }
      }
      auto p = prepare_bytes(t.finish(), PrepareOptions{window});
      ASSERT_TRUE(p) << p.error().message;
      EXPECT_EQ(p->facts.alloc_calls, allocs);
      EXPECT_EQ(p->facts.free_calls, frees);
      EXPECT_GT(check_order(*p), 100u) << "window " << window << " seed " << seed;
    }
  }
}

TEST(Prepare, ADamagedTraceIsPreparedUpToTheDamage) {
  TestTrace t;
  std::vector<format::AllocId> ids;
  for (int i = 0; i < 2000; ++i) ids.push_back(t.alloc(0, 64));
  std::vector<uint8_t> whole = t.finish();
  auto full = prepare_bytes(whole);
  ASSERT_TRUE(full);
  whole.resize(whole.size() - 100);  // cut into the last chunk
  auto cut = prepare_bytes(whole);
  ASSERT_TRUE(cut) << cut.error().message;
  ASSERT_TRUE(cut->facts.damage);
  EXPECT_LT(cut->facts.alloc_calls, full->facts.alloc_calls);
}

}  // namespace
}  // namespace memloupe::replay
