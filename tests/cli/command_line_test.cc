// The command line on the real binary: every parser error is exit 1 with the
// "memloupe:" prefix (commands.h), and every numeric option refuses the values
// outside its bounds and takes the ones on them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "cli_run.h"

namespace memloupe::inspect_testing {
namespace {

// A path that does not exist: a command line the parser accepts then fails to
// open it (exit 2), which tells an accepted value from a refused one (exit 1).
std::string missing_trace() { return "'" + scratch_dir("cli_missing") + "/none.trace'"; }

void expect_usage_error(const std::string& args, const std::string& says) {
  SCOPED_TRACE(args);
  CommandRun r = memloupe(args);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.err.rfind("memloupe: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

void expect_parsed(const std::string& args) {
  SCOPED_TRACE(args);
  CommandRun r = memloupe(args);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.err.rfind("memloupe: cannot open", 0), 0u) << r.err;
}

TEST(CommandLine, ParserErrorsAreUsageErrors) {
  expect_usage_error("run --bogus -- /bin/true", "--bogus");
  expect_usage_error("frobnicate", "unknown command 'frobnicate'");
  expect_usage_error("", "subcommand is required");
  expect_usage_error("run --depth 0 -- /bin/true", "--depth");
  expect_usage_error("top T --depth -3", "--depth");
  expect_usage_error("top", "trace is required");
  expect_usage_error("top T --by nothing", "--by");
  expect_usage_error("export T -o x --format png", "--format");
}

TEST(CommandLine, HelpAndVersionStillSucceed) {
  CommandRun help = memloupe("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_NE(help.out.find("summary"), std::string::npos);
  CommandRun version = memloupe("--version");
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("memloupe"), std::string::npos);
}

TEST(CommandLine, RunRefusesSamplingOutOfBounds) {
  expect_usage_error("run --rate 0 -- /bin/true", "--rate");
  expect_usage_error("run --rate -0.5 -- /bin/true", "--rate");
  expect_usage_error("run --rate 2 -- /bin/true", "--rate");
  expect_usage_error("run --rate abc -- /bin/true", "--rate");
  expect_usage_error("run --every 0 -- /bin/true", "--every");
  expect_usage_error("run --every 12XB -- /bin/true", "--every");
  expect_usage_error("run --depth 257 -- /bin/true", "--depth");
  expect_usage_error("run --depth -1 -- /bin/true", "--depth");
}

#ifndef MEMLOUPE_SANITIZED
TEST(CommandLine, RunTakesSamplingOnTheBounds) {
  const std::string dir = scratch_dir("cli_run_bounds");
  for (const char* options : {"--rate 1", "--rate 0.000001", "--every 1", "--depth 1", "--depth 256"}) {
    SCOPED_TRACE(options);
    CommandRun r = memloupe(std::string("run ") + options + " --no-symbolize -o '" + dir + "/t.trace' -- /bin/true");
    EXPECT_EQ(r.status, 0) << r.err;
  }
}
#endif

TEST(CommandLine, ViewOptionsBounds) {
  const std::string t = missing_trace();
  for (const char* bad : {"top T --limit -1", "top T --frames -1", "top T --min-count -1", "top T --depth x",
                          "leaks T --limit x", "summary T --frames -2", "summary T --top -1",
                          "lifetimes T --top -1", "timeline T --height 1", "timeline T --height 0",
                          "timeline T --width 7", "timeline T --width -1", "top T --thread -1"}) {
    std::string args = bad;
    expect_usage_error(args.replace(args.find(" T "), 3, " " + t + " "), "--");
  }
  for (const char* good : {"top T --limit 0", "top T --frames 0", "top T --min-count 0", "top T --depth 0",
                           "summary T --frames 0", "timeline T --height 2", "timeline T --width 8",
                           "timeline T --width 0", "top T --thread 0"}) {
    std::string args = good;
    expect_parsed(args.replace(args.find(" T "), 3, " " + t + " "));
  }
}

// A trace arriving through a FIFO (or `<(...)`) is read, not called "empty
// (not a trace)"; the views, which look at the file more than once, work too.
TEST(CommandLine, TraceFromAFifo) {
  const std::string dir = scratch_dir("cli_fifo");
  const std::string fifo = dir + "/trace.fifo";
  const std::string sample = source_path("tests/data/memtrace/viewer_test.ctf");
  for (const char* command : {"info", "summary", "top"}) {
    SCOPED_TRACE(command);
    // The writer waits in the background until memloupe opens the FIFO.
    ASSERT_EQ(std::system(("rm -f '" + fifo + "' && mkfifo '" + fifo + "' && (cat '" + sample + "' > '" + fifo +
                           "' &)").c_str()), 0);
    CommandRun r = memloupe(std::string(command) + " '" + fifo + "'");
    CommandRun direct = memloupe(std::string(command) + " '" + sample + "'");
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out, "");
    if (std::string(command) != "info") {
      EXPECT_EQ(r.out, direct.out);
    }
  }
}

}  // namespace
}  // namespace memloupe::inspect_testing
