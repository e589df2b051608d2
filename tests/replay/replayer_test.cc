// The real memloupe-replayer, run as `memloupe replay` runs it, on prepared
// hand-made traces.
#include <gtest/gtest.h>

#include <random>

#include "replay/allocators.h"
#include "replay/prepare.h"
#include "replay/run_replayer.h"
#include "support/test_trace.h"

namespace memloupe::replay {
namespace {

using format::Func;

const std::string kReplayer = std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe-replayer";

Prepared prepare_bytes(std::vector<uint8_t> bytes, PrepareOptions options = {}) {
  auto reader = reader::Reader::from_bytes(std::move(bytes));
  EXPECT_TRUE(reader);
  auto p = prepare(**reader, options);
  EXPECT_TRUE(p) << p.error().message;
  return std::move(*p);
}

OpFile op_file(const Prepared& p) {
  auto f = OpFile::create();
  EXPECT_TRUE(f) << f.error().message;
  auto written = write_op_file(p, f->fd());
  EXPECT_TRUE(written) << written.error().message;
  return std::move(*f);
}

// Producer/consumer with every form: thread 0 allocates, threads 1-3 free or
// reallocate what it made (and their own blocks), in a seeded random order.
std::vector<uint8_t> cross_thread_trace(uint32_t seed, int calls) {
  std::mt19937 rng(seed);
  testing::TestTrace t;
  struct Live {
    format::AllocId id;
    Func free_with;
  };
  std::vector<Live> live;
  const Func forms[][2] = {{Func::Malloc, Func::Free},
                           {Func::Calloc, Func::Free},
                           {Func::New, Func::DeleteSized},
                           {Func::NewArray, Func::DeleteArray},
                           {Func::NewAligned, Func::DeleteAligned},
                           {Func::PosixMemalign, Func::Free},
                           {Func::AlignedAlloc, Func::Free}};
  for (int i = 0; i < calls; ++i) {
    const unsigned r = rng() % 10;
    if (r < 5 || live.empty()) {
      const auto& form = forms[rng() % std::size(forms)];
      const bool aligned = form[0] == Func::NewAligned || form[0] == Func::PosixMemalign || form[0] == Func::AlignedAlloc;
      const uint32_t thread = rng() % 4 == 0 ? 1 + rng() % 3 : 0;
      live.push_back({t.alloc(thread, 64 * (1 + rng() % 300), form[0], aligned ? 64 : 0), form[1]});
    } else {
      const size_t k = rng() % live.size();
      const uint32_t thread = 1 + rng() % 3;
      if (r < 9 || live[k].free_with != Func::Free) {
        t.free(live[k].id, thread, live[k].free_with);
        live[k] = live.back();
        live.pop_back();
      } else {
        live[k].id = t.realloc(live[k].id, thread, 64 * (1 + rng() % 500));
      }
    }
  }
  return t.finish();
}

std::vector<Allocator> available_allocators() {
  auto all = choose_allocators(kDefaultAllocators, {});
  EXPECT_TRUE(all);
  std::vector<Allocator> out;
  for (const Allocator& a : *all) {
#ifdef MEMLOUPE_SANITIZED
    if (!a.library.empty()) continue;  // nothing can be preloaded before ASan's runtime
#endif
    if (a.missing.empty()) out.push_back(a);
  }
  return out;
}

// A block freed by another thread is never freed before its allocation: the
// replayer checks every free against its slot (order_violations), and this
// runs the race many times, with and without ordering windows.
TEST(Replayer, CrossThreadFreesNeverRunBeforeTheirAllocations) {
  const std::vector<Allocator> allocators = available_allocators();
  ASSERT_FALSE(allocators.empty());
  int runs = 0;
  for (uint64_t window : {uint64_t{0}, uint64_t{1024}}) {
    for (uint32_t seed = 1; seed <= 3; ++seed) {
      const Prepared p = prepare_bytes(cross_thread_trace(seed, 20000), PrepareOptions{window});
      ASSERT_EQ(p.threads.size(), 4u);
      ASSERT_GT(p.facts.cross_thread_frees, 5000u);
      const OpFile ops = op_file(p);
      for (const Allocator& a : allocators) {
        const int repeats = a.name == "glibc" ? 10 : 3;
        for (int i = 0; i < repeats; ++i) {
          auto m = run_replayer(kReplayer, ops, a.library);
          ASSERT_TRUE(m) << a.name << ": " << m.error().message;
          EXPECT_EQ(m->order_violations, 0) << a.name << " window " << window << " seed " << seed;
          EXPECT_EQ(m->alloc_calls, static_cast<double>(p.facts.alloc_calls)) << a.name;
          EXPECT_EQ(m->free_calls, static_cast<double>(p.facts.free_calls)) << a.name;
          EXPECT_EQ(m->failed_calls, 0) << a.name;
          EXPECT_EQ(m->threads, 4);
          ++runs;
        }
      }
    }
  }
  EXPECT_GE(runs, 60);
}

// The same races under ThreadSanitizer (a build of the replayer's sources with
// -fsanitize=thread; its allocator is TSan's): a data race in the replayer's
// hand-over of blocks between threads makes it exit with status 66.
TEST(Replayer, CrossThreadReplayIsRaceFreeUnderThreadSanitizer) {
#ifndef MEMLOUPE_REPLAYER_TSAN
  GTEST_SKIP() << "memloupe-replayer-tsan is not built (MEMLOUPE_REPLAYER_TSAN=OFF or a sanitizer build)";
#endif
  const std::string tsan = std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe-replayer-tsan";
  for (uint64_t window : {uint64_t{0}, uint64_t{64}}) {
    for (uint32_t seed = 11; seed <= 13; ++seed) {
      const Prepared p = prepare_bytes(cross_thread_trace(seed, 5000), PrepareOptions{window});
      const OpFile ops = op_file(p);
      for (int i = 0; i < 4; ++i) {
        auto m = run_replayer(tsan, ops, "");
        ASSERT_TRUE(m) << "window " << window << " seed " << seed << ": " << m.error().message;
        EXPECT_EQ(m->order_violations, 0);
        EXPECT_EQ(m->free_calls, static_cast<double>(p.facts.free_calls));
      }
    }
  }
}

// The order check is not vacuous: a stream that frees a slot before filling it
// is caught.
TEST(Replayer, ItsOrderCheckCatchesAFreeBeforeItsAllocation) {
  Prepared p;
  p.slots = 1;
  p.facts.alloc_calls = 1;
  p.facts.free_calls = 1;
  p.threads = {{Op{OpKind::Free, static_cast<uint8_t>(Func::Free), 0, 0, 0, 16},
                Op{OpKind::Alloc, static_cast<uint8_t>(Func::Malloc), 0, 0, 0, 16}}};
  auto m = run_replayer(kReplayer, op_file(p), "");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->order_violations, 1);
}

// Measurements that must hold whatever the allocator: the heap's pages are
// resident at the peak (every page of each block is touched), and a block
// never freed is still resident at the end.
TEST(Replayer, MeasuresTheTouchedHeap) {
  testing::TestTrace t;
  std::vector<format::AllocId> ids;
  for (int i = 0; i < 64; ++i) ids.push_back(t.alloc(0, 1 << 20));  // 64 MiB live
  for (int i = 0; i < 32; ++i) t.free(ids[i], 0);                    // 32 MiB stay to the end
  const Prepared p = prepare_bytes(t.finish());
  EXPECT_EQ(p.facts.ideal_peak_bytes, 64u << 20);
  for (const Allocator& a : available_allocators()) {
    auto m = run_replayer(kReplayer, op_file(p), a.library);
    ASSERT_TRUE(m) << a.name << ": " << m.error().message;
    EXPECT_GE(m->peak_rss_bytes - m->baseline_rss_bytes, 60.0 * (1 << 20)) << a.name;
    EXPECT_GE(m->final_rss_bytes - m->baseline_rss_bytes, 30.0 * (1 << 20)) << a.name;
    EXPECT_GT(m->minor_faults, 32 * 256 / 2) << a.name;  // at least half the pages faulted in
    EXPECT_GT(m->alloc_time_s, 0) << a.name;
  }
}

TEST(Replayer, ACrashingAllocatorIsReportedAsOne) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "no allocator can be preloaded into an ASan-built replayer";
#endif
  const Prepared p = prepare_bytes(cross_thread_trace(7, 20000));
  auto m = run_replayer(kReplayer, op_file(p),
                        std::string(MEMLOUPE_BINARY_DIR) + "/bin/libmemloupe_replay_crash_alloc.so");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("signal 11 (SIGSEGV)"), std::string::npos) << m.error().message;
}

TEST(Replayer, AHangingAllocatorIsKilledAtTheDeadline) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "no allocator can be preloaded into an ASan-built replayer";
#endif
  const Prepared p = prepare_bytes(cross_thread_trace(7, 20000));
  ::setenv("MEMLOUPE_TEST_ALLOC_HANG", "1", 1);
  auto m = run_replayer(kReplayer, op_file(p),
                        std::string(MEMLOUPE_BINARY_DIR) + "/bin/libmemloupe_replay_crash_alloc.so", 2);
  ::unsetenv("MEMLOUPE_TEST_ALLOC_HANG");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("did not finish within 2 s and was killed"), std::string::npos)
      << m.error().message;
}

TEST(Replayer, RefusesAFileThatIsNotAnOpFile) {
  auto f = OpFile::create();
  ASSERT_TRUE(f);
  ASSERT_EQ(::write(f->fd(), "not an op file at all, not at all, not at all....", 48), 48);
  auto m = run_replayer(kReplayer, *f, "");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("status 2"), std::string::npos) << m.error().message;
}

}  // namespace
}  // namespace memloupe::replay
