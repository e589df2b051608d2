// `memloupe replay` on programs recorded with `memloupe run --all`, and its
// answers to bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "analysis/cli_runner.h"
#include "analysis/model.h"
#include "reader/reader.h"
#include "support/test_trace.h"

namespace memloupe::replay {
namespace {

namespace fs = std::filesystem;
using analysis_testing::quote;
using analysis_testing::run_memloupe;

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / ("memloupe-replay-test-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// The first `"key":number` in `json`.
double json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(json, m, std::regex("\"" + key + "\":(-?[0-9.e+]+)"))) return -1;
  return std::stod(m[1]);
}

// The object of `allocator` inside "runs".
std::string run_of(const std::string& json, const std::string& allocator) {
  const size_t at = json.find("{\"allocator\":\"" + allocator + "\"");
  if (at == std::string::npos) return "";
  return json.substr(at, json.find('}', at) - at + 1);
}

struct TraceCounts {
  uint64_t alloc_events = 0, free_events = 0, realloc_allocs = 0;
};
TraceCounts count_events(const fs::path& trace) {
  TraceCounts c;
  auto r = reader::Reader::open(trace.string());
  EXPECT_TRUE(r);
  while (const format::Event* e = (*r)->next()) {
    if (const auto* a = std::get_if<format::Alloc>(e)) {
      ++c.alloc_events;
      c.realloc_allocs += a->realloc_of.has_value();
    }
    c.free_events += std::holds_alternative<format::Free>(*e);
  }
  return c;
}

void write(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Real programs: the C++ forms, threads freeing each other's blocks, and a
// realloc race, each recorded with --all and replayed against every allocator
// that is installed. The replay's call counts are the trace's, its ideal peak
// is the analysis' exact peak.
TEST(ReplayCommand, ReplaysRecordedProgramsAgainstEveryAllocator) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the ASan-built recorder cannot be preloaded into programs";
#endif
  const fs::path dir = scratch();
  const std::string program = std::string(MEMLOUPE_BINARY_DIR) + "/bin/recorder_cxx_forms";
  for (const char* mode : {"forms", "threads", "realloc_race"}) {
    SCOPED_TRACE(mode);
    const fs::path trace = dir / (std::string(mode) + ".trace");
    auto rec = run_memloupe(dir, "run --all -o " + quote(trace.string()) + " -- " + quote(program) + " " + mode);
    ASSERT_EQ(rec.status, 0) << rec.err;
    auto r = run_memloupe(dir, "replay --json " + quote(trace.string()));
    ASSERT_EQ(r.status, 0) << r.err;
    const TraceCounts c = count_events(trace);
    EXPECT_EQ(json_number(r.out, "alloc_calls"), static_cast<double>(c.alloc_events));
    EXPECT_EQ(json_number(r.out, "free_calls"), static_cast<double>(c.free_events - c.realloc_allocs));
    auto model = analysis::analyze_file(trace.string(), {});
    ASSERT_TRUE(model) << model.error().message;
    EXPECT_EQ(json_number(r.out, "ideal_peak_bytes"), static_cast<double>(model->overview.peak.live.bytes));
    if (std::string(mode) == "threads") {
      EXPECT_GT(json_number(r.out, "cross_thread_frees"), 0);
    }
    for (const char* a : {"glibc", "jemalloc", "tcmalloc", "mimalloc"}) {
      const std::string run = run_of(r.out, a);
      ASSERT_FALSE(run.empty()) << a << "\n" << r.out;
      if (run.find("\"skipped\"") != std::string::npos) continue;  // not installed here
      EXPECT_EQ(run.find("\"failed\""), std::string::npos) << run;
      EXPECT_GT(json_number(run, "peak_rss_bytes"), 0) << run;
      // (No prediction is checked here: these programs end within a few RSS
      // samples, below the recorder's own share; predict_test.cc checks the
      // arithmetic and the README's table the predictions on real workloads.)
    }
  }
  fs::remove_all(dir);
}

TEST(ReplayCommand, RefusesASampledTrace) {
  const fs::path dir = scratch();
  testing::TestTrace t(format::Mode::Sampled);
  t.alloc(0, 100);
  write(dir / "sampled.trace", t.finish());
  auto r = run_memloupe(dir, "replay " + quote((dir / "sampled.trace").string()));
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("a replay needs every allocation call; record one with `memloupe run --all`"),
            std::string::npos)
      << r.err;
  fs::remove_all(dir);
}

TEST(ReplayCommand, SkipsAMissingAllocatorAndReportsACrashingOne) {
  const fs::path dir = scratch();
  testing::TestTrace t;
  std::vector<format::AllocId> ids;
  for (int i = 0; i < 5000; ++i) ids.push_back(t.alloc(i % 2, 100));
  for (int i = 0; i < 5000; ++i) t.free(ids[i], (i + 1) % 2);
  write(dir / "t.trace", t.finish());
  const std::string crash = std::string(MEMLOUPE_BINARY_DIR) + "/bin/libmemloupe_replay_crash_alloc.so";
  auto r = run_memloupe(dir, "replay --allocators glibc --allocator ghost=/nonexistent/libghost.so --allocator crash=" +
                                 quote(crash) + " " + quote((dir / "t.trace").string()));
  EXPECT_EQ(r.status, 0) << r.err;  // glibc ran
  EXPECT_NE(r.err.find("ghost: skipped, /nonexistent/libghost.so not found"), std::string::npos) << r.err;
#ifndef MEMLOUPE_SANITIZED
  EXPECT_NE(r.err.find("crash: the replayer was killed by signal 11"), std::string::npos) << r.err;
#endif
  EXPECT_NE(r.out.find("glibc"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("5,000 allocation calls, 5,000 frees (5,000 across threads)"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(ReplayCommand, ReplaysATruncatedTraceUpToTheDamage) {
  const fs::path dir = scratch();
  testing::TestTrace t;
  for (int i = 0; i < 100000; ++i) t.alloc(0, 100);
  std::vector<uint8_t> bytes = t.finish();
  bytes.resize(bytes.size() - 50);
  write(dir / "cut.trace", bytes);
  auto r = run_memloupe(dir, "replay --json --allocators glibc " + quote((dir / "cut.trace").string()));
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.err.find("replaying the"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("before the damage"), std::string::npos) << r.err;
  EXPECT_GT(json_number(r.out, "alloc_calls"), 0) << r.out;
  EXPECT_LT(json_number(r.out, "alloc_calls"), 100000) << r.out;
  EXPECT_NE(r.out.find("\"complete\":false"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(ReplayCommand, RejectsAnUnknownAllocatorName) {
  const fs::path dir = scratch();
  testing::TestTrace t;
  t.alloc(0, 100);
  write(dir / "t.trace", t.finish());
  auto r = run_memloupe(dir, "replay --allocators glibc,ptmalloc9 " + quote((dir / "t.trace").string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("unknown allocator 'ptmalloc9'"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memloupe::replay
