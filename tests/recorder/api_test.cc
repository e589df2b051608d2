// The public C API (include/memloupe/memloupe.h): weak symbols, markers,
// stop/start, flush, sampling callbacks, and thread names.
#include <sstream>

#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

class ApiTest : public PreloadTest {};

TEST_F(ApiTest, WithoutTheLibraryTheWeakFunctionsAreNull) {
  const RunResult r = run({binary("recorder_api_user")});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out, "no memloupe\n");
  // Preloaded but not recording: the functions exist and say so.
  const RunResult off = run({binary("recorder_api_user")}, {.preload = true});
  EXPECT_EQ(off.out, "not recording\n");
}

TEST_F(ApiTest, MarkersStopStartCallbacksAndNames) {
  const RunResult r = run({binary("recorder_api_user")},
                          {.preload = true,
                           .env = {"MEMLOUPE_OUTPUT=" + trace_path().string(), "MEMLOUPE_EVERY=4KiB"}});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  std::istringstream out(r.out);
  std::string word;
  int stopped = -1, started = -1;
  unsigned long allocs = 0, samples = 0, tracked = 0, freed = 0, matched = 0;
  out >> word >> stopped >> word >> started >> word >> allocs >> word >> samples >> word >> tracked >>
      word >> freed >> word >> matched;
  EXPECT_EQ(stopped, 0);
  EXPECT_EQ(started, 0);

  const TraceData t = complete_trace(trace_path(), format::EndReason::Exit);
  EXPECT_EQ(t.markers, (std::vector<std::string>{"start", "end"}));
  EXPECT_EQ(t.thread_names.at(0), "api-main");
  // Between the markers the program allocates only 77777-, 1 MiB- and 300-byte
  // blocks: the callbacks saw exactly the sampled ones.
  unsigned long in_window = 0, window_samples = 0, big = 0, stopped_blocks = 0;
  for (const auto& a : t.allocs) {
    big += a.event.size == 77777;
    stopped_blocks += a.event.size == (1u << 20);
    if (a.event.size == 77777 || a.event.size == 300) ++in_window, window_samples += a.event.n_samples;
  }
  EXPECT_EQ(allocs, in_window);
  EXPECT_EQ(samples, window_samples);
  EXPECT_EQ(big, 20u);             // 77777 bytes at a 4 KiB mean: always sampled
  EXPECT_EQ(stopped_blocks, 0u);   // 100 MiB allocated while stopped, none sampled
  EXPECT_EQ(tracked, 20u);
  EXPECT_EQ(freed, 20u);
  EXPECT_EQ(matched, 20u);
}

}  // namespace
}  // namespace memloupe::recorder_test
