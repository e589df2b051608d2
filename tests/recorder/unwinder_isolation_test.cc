// The recorder's unwinder uses libunwind as a fallback, but must not hand its
// symbols to the traced program: libunwind defines the C++ exception ABI
// (_Unwind_RaiseException, ...) too, and in the program's global scope it could
// take over the program's exceptions from libgcc_s.
#include <fstream>
#include <sstream>

#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

class UnwinderIsolationTest : public PreloadTest {
 protected:
  const std::string program_ = binary("recorder_unwinder_isolation").string();
};

TEST_F(UnwinderIsolationTest, GlobalScopeGainsNoUnwinderSymbols) {
  for (const char* mode : {"sampled", "all"}) {
    SCOPED_TRACE(mode);
    const RunResult r = run_both({program_, "symbols"}, {std::string("MEMLOUPE_MODE=") + mode});
    // The program's own view, natively, is the reference; these two lines say the
    // check can see what it is looking for.
    EXPECT_NE(r.out.find("_Unwind_RaiseException libgcc_s"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("unw_backtrace none"), std::string::npos) << r.out;
  }
}

TEST_F(UnwinderIsolationTest, ExceptionsBehaveAsNatively) {
  for (const char* mode : {"sampled", "all"}) {
    SCOPED_TRACE(mode);
    const RunResult r = run_both({program_, "exceptions"},
                                 {std::string("MEMLOUPE_MODE=") + mode, "MEMLOUPE_EVERY=4096"});
    EXPECT_NE(r.out.find("caught from a thread: depth reached, value 2"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  ~thread frame\n"), std::string::npos) << r.out;
    EXPECT_FALSE(complete_trace(trace_path(), format::EndReason::Exit).allocs.empty());
  }
}

// The fallback is still there, loaded privately when recording starts.
TEST_F(UnwinderIsolationTest, LibunwindIsLoadedPrivatelyWhileRecording) {
  const RunResult traced =
      run({program_, "maps", "libunwind"},
          {.preload = true, .env = {"MEMLOUPE_OUTPUT=" + trace_path().string()}});
  EXPECT_EQ(traced.out, "mapped\n") << traced.describe();
  // Passing through (no output configured), the library loads nothing.
  const RunResult idle = run({program_, "maps", "libunwind"}, {.preload = true});
  EXPECT_EQ(idle.out, "not mapped\n") << idle.describe();
}

TEST_F(UnwinderIsolationTest, PreloadLibraryDoesNotNeedLibunwind) {
  const fs::path readelf = "/usr/bin/readelf";
  if (!fs::exists(readelf)) GTEST_SKIP() << "no " << readelf;
  const RunResult r = run({readelf.string(), "--dynamic", "--dyn-syms", "--wide", preload_library().string()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out.find("libunwind"), std::string::npos) << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    // Defined dynamic symbols of libunwind's families: "... GLOBAL DEFAULT 12 _Unwind_..."
    if (line.find(" UND ") != std::string::npos) continue;
    for (const char* prefix : {" _Unwind_", " unw_", " _U_", " _ULx86_64", " _Ux86_64"})
      EXPECT_EQ(line.find(prefix), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace memloupe::recorder_test
