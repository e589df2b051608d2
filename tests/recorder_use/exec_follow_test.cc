// `memloupe run` on programs started through wrappers: the exec'd program is
// traced by default, into the next file; --no-follow-exec ends the trace at the
// exec and says so.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "recorder_use_fixture.h"

namespace memloupe::testing {
namespace {

// 300 blocks of 100,000 bytes that Python allocates with malloc (bytearray
// buffers: above pymalloc's 512-byte limit).
constexpr const char* kPythonAllocs = "x = [bytearray(100000) for _ in range(300)]";

// python3 may itself be a wrapper (pyenv's shim is a bash script that execs
// pyenv, which execs the interpreter): the chain is followed to its end.
TEST_F(RecorderUse, AWrapperThatExecsPythonIsFollowedIntoPython) {
  const std::string script = write_script("wrapper.sh", std::string("exec python3 -c '") + kPythonAllocs + "'\n");
  const Finished f = run({"run", "--all", "-o", "t.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  const std::vector<std::string> chain = exec_chain("t.trace");
  ASSERT_GE(chain.size(), 2u) << f.err;
  EXPECT_EQ(chain.size(), traces().size());
  for (size_t i = 0; i + 1 < chain.size(); ++i) {
    EXPECT_EQ(summarize(dir_ / chain[i]).end, format::EndReason::Exec) << chain[i];
  }
  const TraceSummary python = summarize(dir_ / chain.back());
  EXPECT_NE(python.executable.find("python3"), std::string::npos) << python.executable;
  EXPECT_EQ(python.end, format::EndReason::Exit);
  EXPECT_GE(python.allocs_between(100'000, 100'200), 300u);
  EXPECT_EQ(f.err.find("warning"), std::string::npos) << f.err;
}

// bash runs its commands with the environment it imported from main's envp,
// not with `environ`, where the recorder keeps the session's pid: each command
// took itself for the launched program and truncated the script's trace while
// bash wrote it, and the exec'd program overwrote it (a damaged trace, or
// memloupe's SIGBUS on the shrunken file). The exec hooks pass the session on
// (src/recorder/exec_follow.h).
TEST_F(RecorderUse, ABashScriptsCommandsLeaveItsTraceWhole) {
  const std::string script = write_script(
      "script.sh", std::string("/bin/true\n/bin/true\nexec python3 -c '") + kPythonAllocs + "'\n", "/bin/bash");
  const Finished f = run({"run", "--all", "-o", "t.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  const std::vector<std::string> chain = exec_chain("t.trace");
  ASSERT_GE(chain.size(), 2u) << f.err;
  EXPECT_EQ(chain.size(), traces().size());
  for (size_t i = 0; i < chain.size(); ++i) {
    const TraceSummary s = summarize(dir_ / chain[i]);
    EXPECT_FALSE(s.error) << chain[i] << ": " << s.error.value_or("");
    EXPECT_EQ(s.end, i + 1 < chain.size() ? format::EndReason::Exec : format::EndReason::Exit) << chain[i];
  }
  EXPECT_NE(summarize(dir_ / chain.front()).executable.find("bash"), std::string::npos);
  EXPECT_GE(summarize(dir_ / chain.back()).allocs_between(100'000, 100'200), 300u);
  EXPECT_EQ(f.err.find("warning"), std::string::npos) << f.err;
}

// A second `memloupe run` onto the file a traced process is still writing
// (here, run by that process itself) refuses to start: its program would run
// untraced (the recorder holds the file locked while it writes it:
// src/recorder/trace_output.h) and its finalised trace would replace the
// file under the writer. The first run's trace is whole.
TEST_F(RecorderUse, ASecondRunOntoATraceBeingWrittenRefusesToStart) {
  const std::string script = write_script(
      "nested.sh", memloupe_exe() + " run --all -o t.trace -- /bin/true\necho \"inner $?\"\n" +
                       "exec " + python_executable() + " -c '" + kPythonAllocs + "'\n");
  const Finished f = run({"run", "--all", "-o", "t.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(f.out, "inner 1\n");  // a command-line error
  EXPECT_NE(f.err.find("memloupe: -o t.trace: a traced process that is still running writes this file"),
            std::string::npos)
      << f.err;
  const std::vector<std::string> chain = exec_chain("t.trace");
  ASSERT_EQ(chain.size(), 2u) << f.err;
  EXPECT_EQ(chain.size(), traces().size());
  for (size_t i = 0; i < chain.size(); ++i) {
    const TraceSummary s = summarize(dir_ / chain[i]);
    EXPECT_FALSE(s.error) << chain[i] << ": " << s.error.value_or("");
  }
  EXPECT_GE(summarize(dir_ / chain.back()).allocs_between(100'000, 100'200), 300u);
}

TEST_F(RecorderUse, NoFollowExecEndsTheTraceAtTheExecAndWarns) {
  const std::string script = write_script("wrapper.sh", std::string("exec python3 -c '") + kPythonAllocs + "'\n");
  const Finished f = run({"run", "--all", "--no-follow-exec", "-o", "t.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(traces(), (std::vector<std::string>{"t.trace"}));
  EXPECT_EQ(summarize(dir_ / "t.trace").allocs_between(100'000, 100'200), 0u);
  EXPECT_NE(f.err.find("memloupe: warning: " + (dir_ / "t.trace").string() +
                       " ended when the program exec'd another one, which was not traced (--no-follow-exec)"),
            std::string::npos)
      << f.err;
}

// A wrapper that runs Python as a child (fork, then exec) rather than exec'ing
// it: forked children are traced only with --follow-fork (docs/RECORDER.md).
TEST_F(RecorderUse, AWrapperThatRunsPythonAsAChildNeedsFollowFork) {
  // The interpreter itself: a pyenv shim would fork a dozen helpers, each traced.
  const std::string script =
      write_script("wrapper.sh", python_executable() + " -c '" + kPythonAllocs + "'\nexit 0\n");
  Finished f = run({"run", "--all", "-o", "alone.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(traces(), (std::vector<std::string>{"alone.trace"}));
  EXPECT_EQ(summarize(dir_ / "alone.trace").allocs_between(100'000, 100'200), 0u);

  f = run({"run", "--all", "--follow-fork", "-o", "t.%p.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  size_t python_blocks = 0;
  for (const std::string& name : traces()) {
    if (name.starts_with("t.")) python_blocks += summarize(dir_ / name).allocs_between(100'000, 100'200);
  }
  EXPECT_GE(python_blocks, 300u) << f.err;
}

// Exec chains: each image's trace in turn, the env-cleaning exec (`env -i`)
// recorded nothing after it and is warned about.
TEST_F(RecorderUse, AnExecThatDropsTheEnvironmentIsWarnedAbout) {
  const std::string script = write_script("wrapper.sh", "exec env -i /bin/true\n");
  const Finished f = run({"run", "-o", "t.trace", "--", script});
  ASSERT_EQ(f.status, 0) << f.err;
  // sh execs env (traced: t.trace.1), env execs true with no environment.
  EXPECT_EQ(exec_chain("t.trace"), (std::vector<std::string>{"t.trace", "t.trace.1"})) << f.err;
  EXPECT_NE(f.err.find("t.trace.1 ended when the program exec'd another one, which recorded nothing"),
            std::string::npos)
      << f.err;
}

}  // namespace
}  // namespace memloupe::testing
