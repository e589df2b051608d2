// Process-level edge cases: fork with and without exec (with and without
// MEMLOUPE_FOLLOW_FORK), exec of the traced image, _exit, abort, exit() from a
// thread, and SIGKILL.
#include <signal.h>

#include <thread>

#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

using format::EndReason;

class ProcessTest : public PreloadTest {
 protected:
  std::vector<std::string> env(bool follow) const {
    return {"MEMLOUPE_MODE=all", "MEMLOUPE_OUTPUT=" + (dir_ / "t.%p.trace").string(),
            std::string("MEMLOUPE_FOLLOW_FORK=") + (follow ? "1" : "0")};
  }
  std::vector<fs::path> traces() const {
    std::vector<fs::path> found;
    for (const auto& e : fs::directory_iterator(dir_.path())) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    return found;
  }
  uint64_t mallocs(const TraceData& t) const { return t.total(format::Func::Malloc).calls; }
};

TEST_F(ProcessTest, ForkedChildRunsUntracedByDefault) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "fork"}, env(false));
  EXPECT_EQ(r.out, "child ok\nparent ok, child 0\n");
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);  // the parent's only
  const TraceData t = complete_trace(files[0], EndReason::Exit);
  EXPECT_GE(mallocs(t), 2000u);  // the parent's two rounds
  EXPECT_LT(mallocs(t), 3000u);  // not the child's
}

TEST_F(ProcessTest, FollowForkGivesTheChildItsOwnTrace) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "fork"}, env(true));
  EXPECT_EQ(r.out, "child ok\nparent ok, child 0\n");
  const auto files = traces();
  ASSERT_EQ(files.size(), 2u);
  const TraceData a = complete_trace(files[0], EndReason::Exit);
  const TraceData b = complete_trace(files[1], EndReason::Exit);
  EXPECT_NE(a.info.pid, b.info.pid);
  const TraceData& child = mallocs(a) < mallocs(b) ? a : b;
  EXPECT_GE(mallocs(child), 1000u);  // its own round, counted from the fork
  EXPECT_LT(mallocs(child), 1500u);
  ASSERT_FALSE(child.thread_starts.empty());
  EXPECT_EQ(child.thread_starts[0].os_tid, child.info.pid);
}

// A child cloned without glibc's fork (no fork handler ran) passes through: the
// parent's trace holds its own calls only, and is whole.
TEST_F(ProcessTest, ChildClonedWithoutForkHandlersRunsUntraced) {
  for (const bool follow : {false, true}) {
    const RunResult r = run_both({binary("recorder_process_zoo"), "raw_fork"}, env(follow));
    EXPECT_EQ(r.out, "raw child ok\nparent ok, child 0\n");
    const auto files = traces();
    ASSERT_EQ(files.size(), 1u);
    const TraceData t = complete_trace(files[0], EndReason::Exit);
    EXPECT_GE(mallocs(t), 2000u);  // the parent's two rounds
    EXPECT_LT(mallocs(t), 3000u);  // none of the child's 40,000
    EXPECT_EQ(t.alloc_events(format::Func::Malloc), mallocs(t));
    EXPECT_TRUE(t.order_errors.empty());
    fs::remove(files[0]);
  }
}

// A child forked while another thread held the recorder's locks runs (and, with
// --follow-fork, records) normally; the run's timeout catches a hang.
TEST_F(ProcessTest, ForkWhileAnotherThreadReallocates) {
  for (const bool follow : {false, true}) {
    const RunResult r = run_both({binary("recorder_process_zoo"), "fork_reallocating"}, env(follow));
    EXPECT_EQ(r.out, "forks done, 0 failed\n") << r.describe();
    const auto files = traces();
    EXPECT_EQ(files.size(), follow ? 41u : 1u);
    for (const auto& f : files) complete_trace(f, EndReason::Exit);
    for (const auto& f : files) fs::remove(f);
  }
}

TEST_F(ProcessTest, ForkThenExecLeavesTheChildUntraced) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "fork_exec"}, env(false));
  EXPECT_EQ(r.out, "exec child ok\nparent ok, child 0\n");
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);
  complete_trace(files[0], EndReason::Exit);
}

// Children run with the environment the program started with (bash's commands
// are): without the session's pid, which the recorder sets in `environ` only,
// each took itself for a launched program and recorded (exec_follow.h; under
// `memloupe run`, into the parent's own file, which it truncated).
TEST_F(ProcessTest, ChildrenRunWithTheFirstEnvironmentAreNotTraced) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "spawn_with_first_environment"}, env(false));
  EXPECT_EQ(r.out, "exec child ok\nexec child ok\nparent ok, children 0 0\n") << r.describe();
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u) << testing::PrintToString(files);
  EXPECT_GE(mallocs(complete_trace(files[0], EndReason::Exit)), 2000u);
}

// A child that starts as a launched program would, with the parent's file
// for output (its environment rebuilt, its exec unseen by the hooks), must not
// empty the trace the parent is still writing: it runs untraced (claim() in
// trace_output.h). Without the lock it truncated the file, and the parent's
// later chunks landed past a hole.
TEST_F(ProcessTest, AnImageNeverEmptiesATraceAnotherProcessIsWriting) {
  const fs::path file = dir_ / "t.trace";
  std::vector<std::string> e = {"MEMLOUPE_MODE=all", "MEMLOUPE_OUTPUT=" + file.string()};
  const RunResult r = run_both({binary("recorder_process_zoo"), "exec_raw_with_recorder_variables"}, e,
                               "memloupe: trace '" + file.string() +
                                   "' is being written by another traced process; this one runs untraced\n");
  EXPECT_EQ(r.out, "exec child ok\nparent ok, child 0\n") << r.describe();
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u) << testing::PrintToString(files);
  const TraceData t = complete_trace(file, EndReason::Exit);
  EXPECT_GE(mallocs(t), 2000u);  // the parent's two rounds
  EXPECT_LT(mallocs(t), 2100u);  // none of the child's
}

TEST_F(ProcessTest, FollowForkTracesForkedAndExecedImages) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "fork_exec"}, env(true));
  EXPECT_EQ(r.out, "exec child ok\nparent ok, child 0\n");
  // The parent; the forked child, ended by its exec; the exec'd image, which has
  // the child's pid and so gets the numbered name.
  const auto files = traces();
  ASSERT_EQ(files.size(), 3u) << testing::PrintToString(files);
  size_t exec_ends = 0, exit_ends = 0;
  for (const auto& f : files) {
    const TraceData t = trace(f);
    EXPECT_FALSE(t.error);
    ASSERT_TRUE(t.end.has_value()) << f;
    exec_ends += t.end->reason == EndReason::Exec;
    exit_ends += t.end->reason == EndReason::Exit;
  }
  EXPECT_EQ(exec_ends, 1u);
  EXPECT_EQ(exit_ends, 2u);
}

// The exec'd image is followed by default (src/recorder/exec_follow.h): its
// trace is the same name with ".1"; the first one ends cleanly at the exec.
TEST_F(ProcessTest, ExecEndsTheTraceCleanlyAndTheNewImageTracesIntoTheNextFile) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "exec_self"}, env(false));
  EXPECT_EQ(r.out, "before exec\nexec child ok\n");
  const auto files = traces();
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1].string(), files[0].string() + ".1");
  const TraceData t = complete_trace(files[0], EndReason::Exec);
  EXPECT_GE(mallocs(t), 1000u);
  complete_trace(files[1], EndReason::Exit);
}

TEST_F(ProcessTest, WithoutFollowExecTheNewImageIsNotTraced) {
  std::vector<std::string> e = env(false);
  e.push_back("MEMLOUPE_FOLLOW_EXEC=0");
  const RunResult r = run_both({binary("recorder_process_zoo"), "exec_self"}, e);
  EXPECT_EQ(r.out, "before exec\nexec child ok\n");
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_GE(mallocs(complete_trace(files[0], EndReason::Exec)), 1000u);
}

TEST_F(ProcessTest, UnderscoreExitWritesACompleteTrace) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "_exit"}, env(false));
  EXPECT_TRUE(r.exited(7)) << r.describe();
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_GE(mallocs(complete_trace(files[0], EndReason::Exit)), 1000u);
}

TEST_F(ProcessTest, AbortWritesACompleteTrace) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "abort"}, env(false));
  EXPECT_TRUE(r.killed_by(SIGABRT)) << r.describe();
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_GE(mallocs(complete_trace(files[0], EndReason::Signal)), 1000u);
}

TEST_F(ProcessTest, ExitFromAnotherThread) {
  const RunResult r = run_both({binary("recorder_process_zoo"), "exit_thread"}, env(false));
  EXPECT_TRUE(r.exited(5)) << r.describe();
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);
  const TraceData t = complete_trace(files[0], EndReason::Exit);
  EXPECT_GE(mallocs(t), 1000u);
  EXPECT_GE(t.thread_starts.size(), 2u);
}

// A killed program leaves what was flushed: events up to the last flush read
// back, only TraceEnd is missing. (The file normally ends at a chunk boundary;
// a kill in the middle of a write may cut the last chunk, which the reader then
// reports as damage after delivering everything before it.)
TEST_F(ProcessTest, SigkillLeavesATraceReadableUpToItsLastFlush) {
  std::vector<std::string> e = env(false);
  e.push_back("MEMLOUPE_FLUSH_MS=100");
  Process p({binary("recorder_process_zoo"), "sleep"}, {.preload = true, .env = e});
  for (int i = 0; i < 500 && p.stdout_so_far() != "ready\n"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(p.stdout_so_far(), "ready\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(600));  // several flush periods
  ::kill(p.pid(), SIGKILL);
  EXPECT_TRUE(p.wait().killed_by(SIGKILL));
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u);
  const TraceData t = trace(files[0]);
  EXPECT_FALSE(t.end.has_value());
  ASSERT_FALSE(t.totals.empty());
  EXPECT_GE(mallocs(t), 1000u);  // the churn before "ready" was flushed
  EXPECT_GE(t.rss_samples, 1u);
}

}  // namespace
}  // namespace memloupe::recorder_test
