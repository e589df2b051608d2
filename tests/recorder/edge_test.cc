// In-process edge cases: signals, longjmp, exceptions, thread-local destructors,
// cross-thread frees, dlopen/dlclose, and outputs that cannot be written. Each
// checks that the program behaves the same with the recorder and that the trace
// reads. --all mode, so that every call leaves an event to check.
#include <fstream>
#include <iterator>
#include <set>

#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

using format::EndReason;

const std::vector<std::string> kAll = {"MEMLOUPE_MODE=all"};

class EdgeTest : public PreloadTest {
 protected:
  size_t allocs_of_size(const TraceData& t, uint64_t size) {
    size_t n = 0;
    for (const auto& a : t.allocs) n += a.event.size == size;
    return n;
  }
};

TEST_F(EdgeTest, SignalHandlerThatAllocates) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "signal"}, kAll);
  EXPECT_EQ(r.out, "handled 1\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  EXPECT_EQ(allocs_of_size(t, 1234), 1u);
}

// Signals landing inside the recorder's slow paths (enter() takes the thread's
// countdown with a cmpxchg that a handler may precede, record.cc); the handler
// calls malloc(SIZE_MAX) (which fails, unrecorded) and free(NULL). A handler's
// call while its thread is inside the recorder passes through, uncounted; one
// between a fast path's subtraction and the slow path's entry is counted, and
// the call it interrupted then continues unsampled (sampled mode). So in --all
// mode none of main's 200,000 mallocs is lost; in sampled mode with every block
// sampled, each of main's mallocs missing from the trace is paid for by a
// counted handler malloc. (Most signals land while main is inside the recorder
// or glibc, where the handler's calls pass through: a run counts a few.)
TEST_F(EdgeTest, SignalStormInsideTheHooks) {
  for (const char* mode : {"MEMLOUPE_MODE=all", "MEMLOUPE_EVERY=1"}) {
    SCOPED_TRACE(mode);
    const RunResult r = run_both({binary("recorder_process_zoo"), "signal_storm"}, {mode});
    EXPECT_EQ(r.out, "storm done\n");
    const TraceData t = complete_trace(trace_path(), EndReason::Exit);
    uint64_t allocs = 0;
    for (const auto& a : t.allocs) allocs += a.event.func == format::Func::Malloc;
    const uint64_t calls = t.total(format::Func::Malloc).calls;
    EXPECT_LE(allocs, calls);
    if (std::string_view(mode) == "MEMLOUPE_MODE=all") {
      EXPECT_GE(allocs, 200000u);
    } else {
      EXPECT_GE(allocs + calls, 400000u);
    }
  }
}

TEST_F(EdgeTest, LongjmpThroughAllocatingFrames) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "longjmp"}, kAll);
  EXPECT_EQ(r.out, "longjmp rounds 20\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  for (uint64_t size = 100; size < 164; ++size) EXPECT_EQ(allocs_of_size(t, size), 20u) << size;
}

TEST_F(EdgeTest, ExceptionsAndBadAllocPassThroughTheHooks) {
  const RunResult r = run_both({binary("recorder_cxx_forms"), "exceptions"}, kAll);
  EXPECT_EQ(r.out, "caught 200 bad_alloc 1 nothrow null\nexceptions done\n");
  complete_trace(trace_path(), EndReason::Exit);
}

TEST_F(EdgeTest, AllocationInThreadLocalDestructors) {
  const RunResult r = run_both({binary("recorder_cxx_forms"), "tls"}, kAll);
  EXPECT_EQ(r.out, "tls threads 4\ntls done\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  // std::string(200, 'z') allocates 201 bytes, once per thread, on its way out.
  std::set<uint32_t> threads;
  for (const auto& a : t.allocs)
    if (a.event.size == 201) threads.insert(a.event.thread.value);
  EXPECT_EQ(threads.size(), 4u);
  EXPECT_FALSE(threads.count(0)) << "allocated on the main thread";
  EXPECT_EQ(t.thread_ends.size(), 4u);
  for (uint32_t id : threads) {
    EXPECT_NE(std::find(t.thread_ends.begin(), t.thread_ends.end(), id), t.thread_ends.end());
    EXPECT_EQ(t.thread_names.at(id), "tls-worker");  // named with prctl: read again at the end
  }
}

TEST_F(EdgeTest, ManyThreadsFreeingEachOthersBlocks) {
  const RunResult r = run_both({binary("recorder_cxx_forms"), "threads"}, kAll);
  EXPECT_EQ(r.out, "threads blocks 30000\nthreads done\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  std::map<uint64_t, uint32_t> owner;  // id -> allocating thread
  for (const auto& a : t.allocs)
    if (a.event.func == format::Func::NewArray) owner[a.event.id.value] = a.event.thread.value;
  EXPECT_EQ(owner.size(), 30000u);
  size_t cross = 0, matched = 0;
  for (const auto& f : t.frees) {
    if (f.func != format::Func::DeleteArray) continue;
    const auto it = owner.find(f.id.value);
    ASSERT_NE(it, owner.end()) << "free of an unknown block " << f.id.value;
    ++matched;
    cross += it->second != f.thread.value;
  }
  EXPECT_EQ(matched, 30000u);
  EXPECT_EQ(cross, 30000u);  // producers never free, consumers never allocate
  EXPECT_GE(t.thread_starts.size(), 13u);  // main + 12 workers
  EXPECT_EQ(t.total(format::Func::NewArray).calls, 30000u);
}

// --all mode: the trace's order (the staging ring's tickets) agrees with the
// allocator's under heavy cross-thread address reuse, reallocs included.
// The addresses are opt-in (MEMLOUPE_ADDRESSES=1); the trace's ids alone are
// checked by every --all test (harness.cc: a free must name a live block).
TEST_F(EdgeTest, AddressesAreNeverHeldByTwoLiveBlocks) {
  const RunResult r = run_both({binary("recorder_cxx_forms"), "realloc_race"},
                               {"MEMLOUPE_MODE=all", "MEMLOUPE_ADDRESSES=1"});
  ASSERT_EQ(r.out, "realloc_race steps 80000\nrealloc_race done\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  ASSERT_TRUE(t.info.addresses);
  EXPECT_TRUE(t.order_errors.empty()) << t.order_errors.size() << " errors, first: " << t.order_errors.front();
  size_t reallocs = 0, moved = 0;
  for (const auto& a : t.allocs)
    if (a.event.func == format::Func::Realloc) ++reallocs, moved += a.event.realloc_of.has_value();
  EXPECT_EQ(reallocs, t.total(format::Func::Realloc).calls);  // each call is one event
  EXPECT_GT(moved, 40000u);  // most reallocs grow a recorded block
}

// --all mode with 16 threads on fewer cores: writers find the staging ring full
// and sleep until its consumer has made room. Every call is in the trace, each
// thread's under its own thread, in an order the allocator agrees with.
TEST_F(EdgeTest, WritersWaitingForAFullRingLoseNothing) {
  const RunResult r = run_both({binary("recorder_cxx_forms"), "flood"}, {"MEMLOUPE_MODE=all", "MEMLOUPE_ADDRESSES=1"});
  ASSERT_EQ(r.out, "flood threads 16 steps 20000\nflood done\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  EXPECT_TRUE(t.order_errors.empty()) << t.order_errors.size() << " errors, first: " << t.order_errors.front();
  constexpr uint64_t kThreads = 16, kSteps = 20000;
  std::map<uint64_t, std::set<uint32_t>> threads_of_size;  // the mallocs' sizes name their thread
  size_t mallocs = 0;
  for (const auto& a : t.allocs) {
    if (a.event.func != format::Func::Malloc || a.event.size < 16 || a.event.size >= 16 * (kThreads + 1)) continue;
    ++mallocs;
    threads_of_size[(a.event.size - 16) / 16].insert(a.event.thread.value);
  }
  EXPECT_EQ(mallocs, kThreads * kSteps);
  ASSERT_EQ(threads_of_size.size(), kThreads);
  for (const auto& [w, threads] : threads_of_size) EXPECT_EQ(threads.size(), 1u) << "sizes of thread " << w;
  EXPECT_EQ(t.alloc_events(format::Func::Realloc), t.total(format::Func::Realloc).calls);
  EXPECT_GE(t.alloc_events(format::Func::Realloc), kThreads * kSteps);
  EXPECT_EQ(t.alloc_events(format::Func::Malloc), t.total(format::Func::Malloc).calls);
  // Each realloc'd block is freed (the program's other frees: blocks from before
  // its threads were known, free(NULL)).
  std::set<uint64_t> grown;
  for (const auto& a : t.allocs)
    if (a.event.func == format::Func::Realloc && a.event.size > 16 && a.event.size <= 16 * (kThreads + 1))
      grown.insert(a.event.id.value);
  size_t freed = 0;
  for (const auto& f : t.frees) freed += f.func == format::Func::Free && grown.count(f.id.value);
  EXPECT_EQ(grown.size(), kThreads * kSteps);
  EXPECT_EQ(freed, kThreads * kSteps);
}

// Sampled mode with every block sampled: the module map is checked before each
// sample there (--all mode checks at most once a millisecond).
TEST_F(EdgeTest, DlopenAndDlcloseOfALibraryThatAllocates) {
  const fs::path plugin = binary("librecorder_plugin.so");
  const RunResult r = run_both({binary("recorder_process_zoo"), "dlopen", plugin}, {"MEMLOUPE_EVERY=1"});
  EXPECT_EQ(r.out, "dlopen rounds 2\n");
  const TraceData t = complete_trace(trace_path(), EndReason::Exit);
  EXPECT_EQ(allocs_of_size(t, 4321), 2u);  // the library's constructor, per load
  EXPECT_EQ(allocs_of_size(t, 1000), 200u);
  size_t plugin_loads = 0;
  for (const auto& m : t.modules_loaded) plugin_loads += m == plugin.string();
  EXPECT_EQ(plugin_loads, 2u);
  EXPECT_GE(t.modules_unloaded, 2u);
}

TEST_F(EdgeTest, ErrnoSurvivesRecordedCalls) {
  const RunResult r = run_both({binary("recorder_known_sites"), "errno"}, kAll);
  EXPECT_EQ(r.out, "errno kept 100/100\nerrno done\n");
  complete_trace(trace_path(), EndReason::Exit);
}

TEST_F(EdgeTest, MissingOutputDirectoryIsReportedOnceAndChangesNothingElse) {
  const fs::path missing = dir_ / "no" / "such" / "dir" / "t.trace";
  run_both({binary("recorder_known_sites"), "exact"}, {"MEMLOUPE_OUTPUT=" + missing.string()},
           "memloupe: cannot write trace '" + missing.string() +
               "': No such file or directory; recording disabled\n");
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(EdgeTest, FullDiskIsReportedOnceAndChangesNothingElse) {
  run_both({binary("recorder_known_sites"), "exact"}, {"MEMLOUPE_OUTPUT=/dev/full", "MEMLOUPE_MODE=all"},
           "memloupe: cannot write trace '/dev/full': No space left on device; recording disabled\n");
}

TEST_F(EdgeTest, AProgramThatClosesAndReusesOurDescriptorGetsNoTraceBytes) {
  const fs::path victim = dir_ / "victim";
  run_both({binary("recorder_process_zoo"), "close_all", victim}, kAll,
           "memloupe: cannot write trace '" + trace_path().string() +
               "': Bad file descriptor; recording disabled\n");
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "victim ok\n");
}

TEST_F(EdgeTest, UnsetOutputMeansNoTraceAndNoMessage) {
  const RunResult r = run_both({binary("recorder_known_sites"), "exact"}, {"MEMLOUPE_OUTPUT="});
  EXPECT_TRUE(r.exited(0));
  EXPECT_TRUE(fs::is_empty(dir_.path()));
}

}  // namespace
}  // namespace memloupe::recorder_test
