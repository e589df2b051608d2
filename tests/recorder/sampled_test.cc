// Sampled mode: estimates from n_samples are unbiased within a stated bound, and
// every sampled block carries the call chain that allocated it.
#include <cmath>
#include <set>

#include "finalize/finalize.h"
#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

constexpr uint64_t kEvery = 64 * 1024;
constexpr uint64_t kBig = 256 * 1024, kBigCount = 4000;  // as in programs/known_sites.c
constexpr uint64_t kSmall = 64, kSmallCount = 400000;

// Bytes(S) ≈ every · Σ n_samples with standard deviation sqrt(bytes · every)
// (src/recorder/sampler.h). 5 sigma: a correct recorder fails this for about one
// seed in 1.7 million; MEMLOUPE_SEED makes the run reproducible.
constexpr double kSigmas = 5;

std::vector<std::string> call_chain(const TraceData& t, const TraceData::AllocEvent& a) {
  std::vector<std::string> chain;
  for (uint64_t address : a.backtrace)
    for (const std::string& f : t.functions_at(address)) chain.push_back(f);
  return chain;
}

class SampledTest : public PreloadTest {};

TEST_F(SampledTest, EstimatesAreWithinFiveSigmaAndCallChainsAreComplete) {
  const RunResult r = run_both({binary("recorder_known_sites"), "sampled"},
                               {"MEMLOUPE_EVERY=64KiB", "MEMLOUPE_SEED=1"});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const fs::path final_trace = dir_ / "final";
  auto finalized = finalize::finalize_trace(trace_path().string(), final_trace.string(), {});
  ASSERT_TRUE(finalized) << finalized.error().message;
  const TraceData t = complete_trace(final_trace, format::EndReason::Exit);
  EXPECT_EQ(t.info.mode, format::Mode::Sampled);
  EXPECT_EQ(t.info.bytes_per_sample, kEvery);

  uint64_t big_samples = 0, small_samples = 0;
  std::set<uint64_t> sampled_ids;
  for (const auto& a : t.allocs) {
    const auto chain = call_chain(t, a);
    if (a.event.size == kBig) {
      big_samples += a.event.n_samples;
      ASSERT_FALSE(chain.empty());
      EXPECT_EQ(chain.front(), "site_big");  // the hook's own frames are not there
      EXPECT_TRUE(in_order(chain, {"site_big", "mid_big", "outer_big", "main"}))
          << testing::PrintToString(chain);
      sampled_ids.insert(a.event.id.value);
    } else if (a.event.size == kSmall && a.event.func == format::Func::Malloc) {
      small_samples += a.event.n_samples;
      ASSERT_FALSE(chain.empty());
      EXPECT_EQ(chain.front(), "inlined_small");  // an inlined frame, from the debug info
      EXPECT_TRUE(in_order(chain, {"inlined_small", "site_small", "main"}))
          << testing::PrintToString(chain);
      sampled_ids.insert(a.event.id.value);
    }
  }
  const auto expect_estimate = [](const char* site, uint64_t samples, double bytes) {
    const double estimate = static_cast<double>(samples * kEvery);
    const double sigma = std::sqrt(bytes * kEvery);
    EXPECT_NEAR(estimate, bytes, kSigmas * sigma) << site << ": " << samples << " samples";
  };
  expect_estimate("big", big_samples, double(kBig) * kBigCount);        // ±4.0%
  expect_estimate("small", small_samples, double(kSmall) * kSmallCount);  // ±25%

  // Every sampled block of the two sites was freed, and the trace says so.
  size_t freed = 0;
  for (const auto& f : t.frees) freed += sampled_ids.count(f.id.value);
  EXPECT_EQ(freed, sampled_ids.size());
  // Exact totals while sampling.
  EXPECT_GE(t.total(format::Func::Malloc).calls, kBigCount + kSmallCount);
  EXPECT_GE(t.total(format::Func::Malloc).bytes, kBig * kBigCount + kSmall * kSmallCount);
}

TEST_F(SampledTest, SameSeedSameSamples) {
  const std::vector<std::string> env = {"MEMLOUPE_EVERY=64KiB", "MEMLOUPE_SEED=7"};
  auto with = [&](const char* name) {
    std::vector<std::string> e = env;
    e.push_back("MEMLOUPE_OUTPUT=" + trace_path(name).string());
    return e;
  };
  run_both({binary("recorder_known_sites"), "sampled"}, with("a"));
  run_both({binary("recorder_known_sites"), "sampled"}, with("b"));
  const TraceData a = trace(trace_path("a")), b = trace(trace_path("b"));
  ASSERT_EQ(a.allocs.size(), b.allocs.size());
  for (size_t i = 0; i < a.allocs.size(); ++i) {
    EXPECT_EQ(a.allocs[i].event.size, b.allocs[i].event.size) << i;
    EXPECT_EQ(a.allocs[i].event.n_samples, b.allocs[i].event.n_samples) << i;
  }
}

}  // namespace
}  // namespace memloupe::recorder_test
