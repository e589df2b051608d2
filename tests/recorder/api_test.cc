// The public C API (include/memloupe/memloupe.h): weak symbols, markers,
// stop/start, flush, sampling callbacks, and thread names.
#include <algorithm>
#include <sstream>

#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

// What recorder_api_user printed and recorded.
struct ApiRun {
  int stopped = -1, started = -1;
  unsigned long allocs = 0, samples = 0, tracked = 0, freed = 0, matched = 0, again = 0;
  // Blocks in the trace: between the markers (77777 and 300 bytes) and their
  // samples, of 77777 bytes, allocated while stopped (1 and 2 MiB), and of 333
  // and 444 bytes (after the markers, without and with a callback).
  unsigned long in_window = 0, window_samples = 0, big = 0, stopped_blocks = 0, after_333 = 0, after_444 = 0;
};

class ApiTest : public PreloadTest {
 protected:
  ApiRun run_api_user(std::vector<std::string> env) {
    env.push_back("MEMLOUPE_OUTPUT=" + trace_path().string());
    const RunResult r = run({binary("recorder_api_user")}, {.preload = true, .env = env});
    EXPECT_TRUE(r.exited(0)) << r.describe();
    ApiRun a;
    std::istringstream out(r.out);
    std::string word;
    out >> word >> a.stopped >> word >> a.started >> word >> a.allocs >> word >> a.samples >> word >>
        a.tracked >> word >> a.freed >> word >> a.matched >> word >> a.again;
    const TraceData t = complete_trace(trace_path(), format::EndReason::Exit);
    // (--all mode adds the exit's snapshot marker after them.)
    const size_t first = std::min<size_t>(t.markers.size(), 2);
    EXPECT_EQ(std::vector<std::string>(t.markers.begin(), t.markers.begin() + first),
              (std::vector<std::string>{"start", "end"}));
    EXPECT_EQ(t.thread_names.at(0), "api-main");
    for (const auto& b : t.allocs) {
      const uint64_t size = b.event.size;
      a.big += size == 77777;
      a.stopped_blocks += size == (1u << 20) || size == (2u << 20);
      a.after_333 += size == 333;
      a.after_444 += size == 444;
      if (size == 77777 || size == 300) ++a.in_window, a.window_samples += b.event.n_samples;
    }
    return a;
  }
};

TEST_F(ApiTest, WithoutTheLibraryTheWeakFunctionsAreNull) {
  const RunResult r = run({binary("recorder_api_user")});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out, "no memloupe\n");
  // Preloaded but not recording: the functions exist and say so.
  const RunResult off = run({binary("recorder_api_user")}, {.preload = true});
  EXPECT_EQ(off.out, "not recording\n");
}

TEST_F(ApiTest, MarkersStopStartCallbacksAndNames) {
  const ApiRun a = run_api_user({"MEMLOUPE_EVERY=4KiB"});
  EXPECT_EQ(a.stopped, 0);
  EXPECT_EQ(a.started, 0);
  // Between the markers the program allocates only 77777-, 1 MiB- and 300-byte
  // blocks: the callbacks saw exactly the sampled ones.
  EXPECT_EQ(a.allocs, a.in_window);
  EXPECT_EQ(a.samples, a.window_samples);
  EXPECT_EQ(a.big, 20u);             // 77777 bytes at a 4 KiB mean: always sampled
  EXPECT_EQ(a.stopped_blocks, 0u);   // 300 MiB allocated while stopped, none sampled
  EXPECT_EQ(a.tracked, 20u);
  EXPECT_EQ(a.freed, 20u);
  EXPECT_EQ(a.matched, 20u);
  EXPECT_EQ(a.again, a.after_444);
}

// --all mode records through its staging ring behind the lean gate
// (docs/RECORDER.md, "The slow paths"): a callback's registration and a
// pause must shut it at once, and their end open it again.
TEST_F(ApiTest, StopStartAndCallbacksInAllMode) {
  const ApiRun a = run_api_user({"MEMLOUPE_MODE=all"});
  EXPECT_EQ(a.stopped, 0);
  EXPECT_EQ(a.started, 0);
  EXPECT_EQ(a.in_window, 1020u);     // every call between the markers
  EXPECT_EQ(a.allocs, 1020u);        // and the callback saw each one
  EXPECT_EQ(a.samples, 1020u);
  EXPECT_EQ(a.stopped_blocks, 0u);   // none while stopped, with a callback or without
  EXPECT_EQ(a.tracked, 20u);
  EXPECT_EQ(a.freed, 20u);
  EXPECT_EQ(a.matched, 20u);
  EXPECT_EQ(a.after_333, 100u);      // staged again once the callback was gone
  EXPECT_EQ(a.after_444, 100u);
  EXPECT_EQ(a.again, 100u);          // a callback installed later sees every call
}

}  // namespace
}  // namespace memloupe::recorder_test
