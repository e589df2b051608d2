// Exact call counts and bytes per allocation function, in --all mode (every call
// is an event) and in sampled mode (the CallTotals are exact there too).
#include <set>
#include <sstream>

#include "finalize/finalize.h"
#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

using format::Func;

// The programs print "<function name> <calls> <bytes>" for what they did.
std::map<std::string, format::FuncTotal> reported(const std::string& out) {
  std::map<std::string, format::FuncTotal> r;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    const size_t b = line.rfind(' ');
    const size_t c = b == std::string::npos ? b : line.rfind(' ', b - 1);
    if (c == std::string::npos) continue;
    try {
      r[line.substr(0, c)] = {std::stoull(line.substr(c + 1, b - c - 1)), std::stoull(line.substr(b + 1))};
    } catch (const std::exception&) {
    }
  }
  return r;
}

class ExactTest : public PreloadTest {
 protected:
  // The program's mode minus its "baseline" mode (start-up allocations of libc
  // and the runtime), both recorded with `env`.
  void expect_exact(const fs::path& program, const std::string& mode, const std::vector<std::string>& env) {
    std::vector<std::string> base_env = env, mode_env = env;
    base_env.push_back("MEMLOUPE_OUTPUT=" + trace_path("baseline").string());
    mode_env.push_back("MEMLOUPE_OUTPUT=" + trace_path(mode).string());
    run_both({program, "baseline"}, base_env);
    const RunResult r = run_both({program, mode}, mode_env);
    ASSERT_TRUE(r.exited(0)) << r.describe();
    const auto expected = reported(r.out);
    ASSERT_FALSE(expected.empty()) << r.out;
    const TraceData base = complete_trace(trace_path("baseline"), format::EndReason::Exit);
    const TraceData t = complete_trace(trace_path(mode), format::EndReason::Exit);
    const bool all = t.info.mode == format::Mode::All;
    for (const auto& [name, want] : expected) {
      const Func f = func_named(name);
      EXPECT_EQ(t.total(f).calls - base.total(f).calls, want.calls) << name;
      EXPECT_EQ(t.total(f).bytes - base.total(f).bytes, want.bytes) << name;
      if (!all) continue;
      // Every call is an event (free(NULL) would not be, and none is made).
      if (format::func_allocates(f))
        EXPECT_EQ(t.alloc_events(f) - base.alloc_events(f), want.calls) << name;
      else
        EXPECT_EQ(t.free_events(f) - base.free_events(f), want.calls) << name;
    }
  }
};

TEST_F(ExactTest, EveryCFunctionInAllMode) {
  expect_exact(binary("recorder_known_sites"), "exact", {"MEMLOUPE_MODE=all"});
}

TEST_F(ExactTest, EveryCFunctionWhileSampling) {
  expect_exact(binary("recorder_known_sites"), "exact", {"MEMLOUPE_EVERY=4KiB"});
}

TEST_F(ExactTest, EveryOperatorNewAndDeleteForm) {
  expect_exact(binary("recorder_cxx_forms"), "forms", {"MEMLOUPE_MODE=all"});
}

// In --all mode every allocation's backtrace starts at the function that called
// the allocation function: none of the recorder's frames (hook, cold entry, slow
// path) before it, and the caller itself not dropped. Counted per allocation
// function against the calls the program reports.
TEST_F(ExactTest, EveryBacktraceStartsAtTheCaller) {
  struct Case {
    const char* program;
    const char* mode;
    const char* caller;  // the program's function that makes the calls
  };
  for (const Case& c : {Case{"recorder_known_sites", "exact", "exact"},
                        Case{"recorder_cxx_forms", "forms", "forms"}}) {
    SCOPED_TRACE(c.program);
    const fs::path raw = trace_path(c.mode), final_trace = dir_ / (std::string(c.mode) + ".final");
    const RunResult r = run_both({binary(c.program), c.mode},
                                 {"MEMLOUPE_MODE=all", "MEMLOUPE_OUTPUT=" + raw.string()});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    auto finalized = finalize::finalize_trace(raw.string(), final_trace.string(), {});
    ASSERT_TRUE(finalized) << finalized.error().message;
    const TraceData t = complete_trace(final_trace, format::EndReason::Exit);
    std::map<Func, uint64_t> from_caller;
    std::set<std::string> other_first;  // for the failure message
    for (const auto& a : t.allocs) {
      if (a.backtrace.empty()) continue;
      const std::vector<std::string> first = t.functions_at(a.backtrace.front());
      if (!first.empty() && first.front() == c.caller) {
        ++from_caller[a.event.func];
      } else if (!first.empty()) {
        other_first.insert(first.front());
      }
    }
    const auto expected = reported(r.out);
    ASSERT_FALSE(expected.empty()) << r.out;
    for (const auto& [name, want] : expected) {
      const Func f = func_named(name);
      if (!format::func_allocates(f)) continue;
      EXPECT_EQ(from_caller[f], want.calls) << name << "; other first frames: "
                                           << testing::PrintToString(other_first);
    }
  }
}

// Both forms: the default --all trace has no addresses (the reader gives 0),
// MEMLOUPE_ADDRESSES=1 keeps them; the frees name their blocks either way.
TEST_F(ExactTest, EveryFreeEndsOneEarlierAllocation) {
  for (const bool addresses : {false, true}) {
    run_both({binary("recorder_known_sites"), "exact"},
             {"MEMLOUPE_MODE=all", addresses ? "MEMLOUPE_ADDRESSES=1" : "MEMLOUPE_ADDRESSES=0"});
    const TraceData t = complete_trace(trace_path(), format::EndReason::Exit);
    EXPECT_EQ(t.info.addresses, addresses);
    EXPECT_TRUE(t.order_errors.empty()) << t.order_errors.front();
    std::set<uint64_t> live;
    for (const auto& a : t.allocs) {
      if (addresses) EXPECT_NE(a.event.address, 0u);
      else EXPECT_EQ(a.event.address, 0u);
      live.insert(a.event.id.value);
    }
    EXPECT_EQ(live.size(), t.allocs.size());  // ids are distinct
    size_t reallocs = 0;
    for (const auto& a : t.allocs) reallocs += a.event.realloc_of.has_value();
    std::set<uint64_t> ended;
    for (const auto& f : t.frees) {
      EXPECT_TRUE(live.count(f.id.value)) << f.id.value;
      EXPECT_TRUE(ended.insert(f.id.value).second) << "freed twice: " << f.id.value;
    }
    // The 300-step realloc chain moves its block now and then: linked events.
    EXPECT_GT(reallocs, 0u);
  }
}

// Sampled (the hooks' fast path) and --all (the slow path): operator new(0) and
// new char[0] give distinct non-null blocks, and each is one counted call.
TEST_F(ExactTest, OperatorNewOfZeroBytes) {
  for (const char* mode : {"MEMLOUPE_EVERY=512KiB", "MEMLOUPE_MODE=all"}) {
    run_both({binary("recorder_cxx_forms"), "baseline"},
             {mode, "MEMLOUPE_OUTPUT=" + trace_path("baseline").string()});
    const RunResult r = run_both({binary("recorder_cxx_forms"), "new_zero"}, {mode});
    EXPECT_EQ(r.out, "new_zero distinct\nnew_zero done\n") << mode;
    const TraceData base = complete_trace(trace_path("baseline"), format::EndReason::Exit);
    const TraceData t = complete_trace(trace_path(), format::EndReason::Exit);
    EXPECT_EQ(t.total(Func::New).calls - base.total(Func::New).calls, 4u) << mode;
    EXPECT_EQ(t.total(Func::NewArray).calls - base.total(Func::NewArray).calls, 4u) << mode;
    EXPECT_EQ(t.total(Func::New).bytes - base.total(Func::New).bytes, 0u) << mode;
  }
}

TEST_F(ExactTest, ZeroSizesAndNullPointers) {
  run_both({binary("recorder_known_sites"), "baseline"},
           {"MEMLOUPE_MODE=all", "MEMLOUPE_OUTPUT=" + trace_path("baseline").string()});
  const RunResult r = run_both({binary("recorder_known_sites"), "zero"}, {"MEMLOUPE_MODE=all"});
  EXPECT_EQ(r.out, "malloc0 nonnull\nrealloc0 null\nreallocnull nonnull\nzero done\n");
  const TraceData base = complete_trace(trace_path("baseline"), format::EndReason::Exit);
  const TraceData t = complete_trace(trace_path(), format::EndReason::Exit);
  bool zero_block = false, realloc_of_null = false;
  for (const auto& a : t.allocs) {
    zero_block |= a.event.func == Func::Malloc && a.event.size == 0;
    realloc_of_null |= a.event.func == Func::Realloc && a.event.size == 24 && !a.event.realloc_of;
  }
  EXPECT_TRUE(zero_block);
  EXPECT_TRUE(realloc_of_null);
  EXPECT_EQ(t.free_events(Func::Realloc), 1u);  // realloc(p, 0) freed p
  // free(malloc(0)), free(NULL), free(realloc(p, 0) == NULL), free(realloc(NULL, 24)):
  // four calls, two events.
  EXPECT_EQ(t.total(Func::Free).calls - base.total(Func::Free).calls, 4u);
  EXPECT_EQ(t.free_events(Func::Free) - base.free_events(Func::Free), 2u);
}

// heaptrack records every call too; on a program using only functions both
// intercept, the numbers of allocation calls must agree.
TEST_F(ExactTest, AllocationCallsEqualHeaptracksCount) {
  if (run({"/bin/sh", "-c", "command -v heaptrack && command -v heaptrack_print"}).out.empty())
    GTEST_SKIP() << "heaptrack is not installed";
  const fs::path program = binary("recorder_heaptrack_pattern");
  run_both({program}, {"MEMLOUPE_MODE=all"});
  const TraceData t = complete_trace(trace_path(), format::EndReason::Exit);
  uint64_t ours = 0;
  for (unsigned f = 0; f < format::kFuncCount; ++f)
    if (format::func_allocates(static_cast<Func>(f))) ours += t.totals.back().totals[f].calls;

  const RunResult ht = run({"/bin/sh", "-c",
                            "heaptrack -o '" + (dir_ / "ht").string() + "' '" + program.string() +
                                "' >/dev/null 2>&1 && heaptrack_print '" + (dir_ / "ht").string() +
                                ".zst'"});
  const size_t at = ht.out.find("calls to allocation functions: ");
  ASSERT_NE(at, std::string::npos) << ht.describe();
  const uint64_t theirs = std::stoull(ht.out.substr(at + 31));
  EXPECT_EQ(ours, theirs);
  EXPECT_GT(ours, 3000u + 700 + 400 + 2000 + 500);
}

}  // namespace
}  // namespace memloupe::recorder_test
