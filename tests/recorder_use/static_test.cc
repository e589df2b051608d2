// `memloupe run` on a statically linked program: refused at once, before it
// runs, with the reason and exit code 5 (README, "Exit codes").
#include <gtest/gtest.h>

#include <filesystem>

#include "recorder_use_fixture.h"

namespace memloupe::testing {
namespace {

std::string built(const std::string& name) { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/" + name; }

TEST_F(Launch, StaticBinariesAreRefusedBeforeTheyRun) {
  for (const std::string program : {"recorder_use_static", "recorder_use_static_pie"}) {
    const std::string ran = dir_ / (program + ".ran");
    const Finished f = run({"run", "-o", "t.trace", "--", built(program), ran});
    EXPECT_EQ(f.status, 5) << program << ": " << f.err;
    EXPECT_EQ(f.err, "memloupe: " + built(program) + ": static binary: LD_PRELOAD cannot work\n");
    EXPECT_FALSE(std::filesystem::exists(ran)) << program << " was run";
    EXPECT_TRUE(traces().empty());
  }
}

TEST_F(Launch, AScriptWhoseInterpreterIsStaticIsRefusedToo) {
  const std::string script = dir_ / "script";
  std::ofstream(script) << "#!" << built("recorder_use_static") << "\n";
  ::chmod(script.c_str(), 0755);
  const Finished f = run({"run", "--", script});
  EXPECT_EQ(f.status, 5) << f.err;
  EXPECT_NE(f.err.find("static binary: LD_PRELOAD cannot work (its interpreter " + built("recorder_use_static") +
                       " is statically linked)"),
            std::string::npos)
      << f.err;
}

// The check finds programs in PATH like the launch does, and leaves dynamic
// programs and scripts alone.
TEST_F(Run, DynamicProgramsInPathStillRun) {
  const Finished f = run({"run", "-o", "t.trace", "--", "sh", "-c", "exit 4"});
  EXPECT_EQ(f.status, 4) << f.err;
  EXPECT_EQ(f.err.find("static"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace memloupe::testing
