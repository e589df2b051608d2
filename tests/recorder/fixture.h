// The common shape of a recorder end-to-end test: run a program without and with
// the preload library, check that the program cannot tell the difference, read
// the trace.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "harness.h"

namespace memloupe::recorder_test {

class PreloadTest : public testing::Test {
 protected:
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "this build's preload library is ASan-instrumented and cannot be "
                    "LD_PRELOADed into uninstrumented programs; the recorder's unit tests "
                    "(memloupe_recorder_test) run under the sanitizers instead";
#endif
  }

  fs::path trace_path(const std::string& name = "trace") const { return dir_ / name; }

  // Runs `argv` plainly and traced (MEMLOUPE_OUTPUT=trace_path() unless `env`
  // sets it) and checks that stdout, stderr (plus `extra_stderr`) and the exit
  // status are the same. Returns the traced run.
  RunResult run_both(const std::vector<std::string>& argv, std::vector<std::string> env = {},
                     const std::string& extra_stderr = "", const fs::path& cwd = {}) {
    bool has_output = false;
    for (const auto& e : env) has_output |= e.starts_with("MEMLOUPE_OUTPUT=");
    if (!has_output) env.push_back("MEMLOUPE_OUTPUT=" + trace_path().string());
    const RunResult plain = run(argv, {.cwd = cwd});
    const RunResult traced = run(argv, {.preload = true, .env = env, .cwd = cwd});
    EXPECT_FALSE(plain.timed_out);
    EXPECT_EQ(traced.out, plain.out) << traced.describe();
    EXPECT_EQ(traced.err, plain.err + extra_stderr) << traced.describe();
    EXPECT_EQ(traced.wait_status, plain.wait_status) << "plain: " << plain.describe()
                                                     << "\ntraced: " << traced.describe();
    return traced;
  }

  // Reads a trace, failing the test if it cannot be opened.
  TraceData trace(const fs::path& path) {
    auto t = read_trace(path);
    if (!t) {
      ADD_FAILURE() << "cannot read " << path << ": " << t.error().message;
      return {};
    }
    return std::move(t.value());
  }
  TraceData trace() { return trace(trace_path()); }

  // A trace that ended normally: read without damage, with TraceEnd(reason)
  // and the exact totals.
  TraceData complete_trace(const fs::path& path, format::EndReason reason) {
    TraceData t = trace(path);
    EXPECT_FALSE(t.error) << t.error->message << " at " << t.error->offset;
    EXPECT_EQ(t.end ? std::optional(t.end->reason) : std::nullopt, std::optional(reason));
    EXPECT_FALSE(t.totals.empty());
    return t;
  }

  TempDir dir_;
};

}  // namespace memloupe::recorder_test
