// The command line on the real binary: every parser error is exit 1 with the
// "memloupe:" prefix (commands.h), and every numeric option refuses the values
// outside its bounds and takes the ones on them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
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

// main.cc builds only the command argv[1] names: its parse is what it was
// with every command built (another command's name after it is not a second
// command), its --help is its own, and a command line without a command still
// sees them all.
TEST(CommandLine, TheCommandNamedParsesAsAmongAll) {
  expect_usage_error("summary " + missing_trace() + " top", "not expected: top");
  CommandRun r = memloupe("summary summary");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("cannot open 'summary'"), std::string::npos) << r.err;
  CommandRun top = memloupe("top --help");
  EXPECT_EQ(top.status, 0);
  EXPECT_NE(top.out.find("--by"), std::string::npos) << top.out;
  CommandRun help = memloupe("--help");
  for (const char* command : {"run", "snapshot", "attach", "detach", "live", "symbolize", "info", "summary", "top",
                              "timeline", "leaks", "retention", "lifetimes", "types", "diff", "report", "export",
                              "replay", "dump"}) {
    EXPECT_NE(help.out.find(std::string("\n  ") + command + " "), std::string::npos) << command;
  }
  expect_usage_error("Run", "unknown command 'Run'");
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

#ifndef MEMLOUPE_SANITIZED
// Finalising shows a progress line on a terminal (here `script` gives it one,
// with the one-second delay set to 0 so the test does not wait on the clock),
// and nothing when stderr is not a terminal.
TEST(CommandLine, FinalisingShowsProgressOnATerminalOnly) {
  if (std::system("script --version >/dev/null 2>&1") != 0) GTEST_SKIP() << "script (util-linux) is not installed";
  const std::string dir = scratch_dir("cli_progress");
  const std::string trace = dir + "/t.trace";
  ASSERT_EQ(memloupe("run --no-symbolize -o '" + trace + "' -- /bin/true").status, 0);
  CommandRun piped = memloupe("symbolize --force '" + trace + "'");
  EXPECT_EQ(piped.status, 0) << piped.err;
  EXPECT_EQ(piped.err.find("finalising"), std::string::npos) << piped.err;
  const CommandRun r = shell("MEMLOUPE_PROGRESS_DELAY_MS=0 script -qec \"'" + memloupe_binary() +
                             "' symbolize --force '" + trace + "'\" /dev/null");
  EXPECT_EQ(r.status, 0);
  const std::string& terminal = r.out;
  EXPECT_NE(terminal.find("  finalising " + trace + ": "), std::string::npos) << terminal;
  EXPECT_NE(terminal.find("\r\033[K"), std::string::npos);  // and the line is wiped
  EXPECT_NE(terminal.find("memloupe: wrote"), std::string::npos) << terminal;
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

// Runs python3 on `json` with `script` (reading the parsed value as `d`);
// returns its stdout, or "invalid" when the text is not JSON.
std::string with_python(const std::string& json, const std::string& script) {
  const std::string dir = scratch_dir("cli_json." + std::to_string(::getpid()));
  {
    std::ofstream(dir + "/in.json") << json;
  }
  return shell("python3 -c 'import json,sys\ntry:\n d=json.load(open(sys.argv[1]))\nexcept Exception:\n "
               "print(\"invalid\"); sys.exit(0)\n" + script + "' '" + dir + "/in.json'")
      .out;
}

// --json on every view, summary included, and CSV on summary.
TEST(CommandLine, EveryViewHasJsonAndSummaryHasCsv) {
  if (std::system("python3 -c 1 2>/dev/null") != 0) GTEST_SKIP() << "python3 is not installed";
  const std::string t = "'" + source_path("tests/data/memtrace/viewer_test.ctf") + "'";
  for (const std::string view : {"summary", "top", "leaks", "lifetimes", "timeline", "top --callers create"}) {
    SCOPED_TRACE(view);
    CommandRun r = memloupe(view + " --json " + t);
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(with_python(r.out, "print(type(d).__name__)"), view == "summary" || view == "timeline" ? "dict\n" : "list\n")
        << r.out.substr(0, 300);
  }
  CommandRun diff = memloupe("diff --json " + t + " " + t);
  EXPECT_EQ(diff.status, 0);
  EXPECT_EQ(with_python(diff.out, "print(len(d))"), "0\n");
  // The JSON carries the CSV's numbers.
  CommandRun top_json = memloupe("top --json " + t), top_csv = memloupe("top --csv " + t);
  const std::string first_csv_row = top_csv.out.substr(top_csv.out.find('\n') + 1);
  const std::string rank_and_bytes = first_csv_row.substr(0, first_csv_row.find(',', 2));  // "1,7520"
  EXPECT_EQ(with_python(top_json.out, "print(\"%d,%d\" % (d[0][\"rank\"], d[0][\"allocated_bytes\"]))"),
            rank_and_bytes + "\n");
  CommandRun summary = memloupe("summary --json " + t);
  EXPECT_EQ(with_python(summary.out, "print(d[\"mode\"], d[\"figures\"][0][\"measure\"], len(d[\"sites_by_allocated\"]))"),
            "sampled allocated 10\n");
  CommandRun csv = memloupe("summary --csv " + t);
  EXPECT_EQ(csv.status, 0);
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')),
            "measure,bytes,bytes_lo,bytes_hi,blocks,blocks_lo,blocks_hi,time_ns");
  EXPECT_NE(csv.out.find("\nallocated,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\npeak,"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nleaked,"), std::string::npos) << csv.out;
  expect_usage_error("top --csv --json " + t, "--json");
}

}  // namespace
}  // namespace memloupe::inspect_testing
