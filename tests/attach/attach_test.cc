// `memloupe attach` on real processes: a multi-threaded program allocating
// steadily (attach_target), python3 and sqlite3 in the middle of a workload, and
// the bad cases, each refused with its message and the target untouched.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <thread>

#include "support/child_process.h"

namespace memloupe::test_support {
namespace {

using namespace std::chrono_literals;

std::string bin(const std::string& name) { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/" + name; }

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs a command to completion (argv[0] a path), stdout and stderr captured.
Result run(const TempDir& dir, std::vector<std::string> argv, const std::string& tag) {
  ChildSpec spec{std::move(argv), current_environment(), dir.path(), {}, dir / (tag + ".out"), dir / (tag + ".err")};
  Child c(spec);
  const ChildExit e = c.wait(120s);
  Result r;
  r.status = WIFEXITED(e.wait_status) ? WEXITSTATUS(e.wait_status) : 128 + WTERMSIG(e.wait_status);
  r.out = read_file(dir / (tag + ".out"));
  r.err = read_file(dir / (tag + ".err"));
  return r;
}

Result attach(const TempDir& dir, pid_t pid, const std::vector<std::string>& options, const std::string& tag) {
  std::vector<std::string> argv{bin("memloupe"), "attach", std::to_string(pid)};
  argv.insert(argv.end(), options.begin(), options.end());
  return run(dir, argv, tag);
}

// Waits until `file` contains `text`.
bool wait_for_text(const fs::path& file, const std::string& text, std::chrono::seconds limit = 30s) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (read_file(file).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

int shell_status(const ChildExit& e) {
  return WIFEXITED(e.wait_status) ? WEXITSTATUS(e.wait_status) : 128 + WTERMSIG(e.wait_status);
}

// The number after "  NAME " in `memloupe info`'s event counts.
long event_count(const std::string& info, const std::string& name) {
  const size_t at = info.find("\n  " + name + " ");
  return at == std::string::npos ? -1 : std::stol(info.substr(info.find_first_not_of(' ', at + 3 + name.size())));
}

constexpr const char* kIterations = "1000";

// The target's environment. Sanitized builds: the recorder's operator new[] takes
// its block from malloc (hooks.cc), and once detached the program's delete[] is
// ASan's again, which reports that pairing; glibc and libstdc++ allow it.
std::vector<std::string> target_environment() {
  std::vector<std::string> env = current_environment();
#ifdef MEMLOUPE_SANITIZED
  env.push_back("ASAN_OPTIONS=alloc_dealloc_mismatch=0");
#endif
  return env;
}

TEST(Attach, RecordsARunningMultiThreadedProgramTwiceWithoutChangingIt) {
  TempDir dir;
  const Result reference = run(dir, {bin("attach_target"), kIterations}, "reference");
  ASSERT_EQ(reference.status, 7) << reference.err;

  // Runs until the test creates "stop".
  ChildSpec spec{{bin("attach_target"), kIterations, "stop"}, target_environment(), dir.path(), {},
                 dir / "target.out", dir / "target.err"};
  Child target(spec);
  ASSERT_TRUE(wait_for_text(dir / "target.out", "ready\n"));
  const Result first = attach(dir, target.pid(), {"--duration", "2s", "-o", "first.trace", "--every", "64KiB"}, "a1");
  ASSERT_EQ(first.status, 0) << first.err;
  EXPECT_NE(first.err.find("wrote " + (dir / "first.trace").string()), std::string::npos) << first.err;
  // A second attach to the same process (the library is loaded already), recording every call.
  const Result second = attach(dir, target.pid(), {"--duration", "1s", "-o", "second.trace", "--all"}, "a2");
  ASSERT_EQ(second.status, 0) << second.err;

  std::ofstream(dir / "stop").close();
  const ChildExit e = target.wait(120s);
  EXPECT_FALSE(e.timed_out);
  EXPECT_EQ(shell_status(e), 7);
  EXPECT_EQ(read_file(dir / "target.out"), reference.out);
  EXPECT_EQ(read_file(dir / "target.err"), "");

  for (const char* trace : {"first.trace", "second.trace"}) {
    SCOPED_TRACE(trace);
    const Result info = run(dir, {bin("memloupe"), "info", trace}, std::string(trace) + ".info");
    ASSERT_EQ(info.status, 0) << info.err;
    EXPECT_GT(event_count(info.out, "alloc"), 20) << info.out;
    EXPECT_EQ(event_count(info.out, "marker"), 1) << info.out;  // where the recording starts
    EXPECT_GE(event_count(info.out, "thread_start"), 3) << info.out;  // the workers, already running
    EXPECT_EQ(event_count(info.out, "trace_end"), 1) << info.out;
    const Result summary = run(dir, {bin("memloupe"), "summary", trace}, std::string(trace) + ".summary");
    EXPECT_NE(summary.out.find("recorded by `memloupe attach` from"), std::string::npos) << summary.out;
    // The program's own sites, with the caller above them.
    const Result top = run(dir, {bin("memloupe"), "top", trace}, std::string(trace) + ".top");
    ASSERT_EQ(top.status, 0) << top.err;
    for (const char* site : {"attach_site_alpha", "attach_site_beta"}) {
      const size_t at = top.out.find(site);
      ASSERT_NE(at, std::string::npos) << top.out;
      EXPECT_NE(top.out.find("← worker", at), std::string::npos) << top.out;
    }
  }
}

// attach_target running until DIR/stop exists, once it says it is ready.
std::unique_ptr<Child> start_target(const TempDir& dir) {
  auto target = std::make_unique<Child>(ChildSpec{{bin("attach_target"), kIterations, "stop"}, target_environment(),
                                                  dir.path(), {}, dir / "target.out", dir / "target.err"});
  EXPECT_TRUE(wait_for_text(dir / "target.out", "ready\n"));
  return target;
}

// dump's last call_totals: calls of `func`; the Alloc events of `func`.
struct FuncCounts {
  long total_calls = -1, alloc_events = 0;
};
FuncCounts func_counts(const std::string& dump, const std::string& func) {
  FuncCounts c;
  const size_t totals = dump.rfind("\ncall_totals ");
  const size_t at = dump.find(" " + func + "=", totals);
  if (totals != std::string::npos && at != std::string::npos && at < dump.find('\n', totals + 1))
    c.total_calls = std::stol(dump.substr(at + func.size() + 2));
  for (size_t p = dump.find("\nalloc "); p != std::string::npos; p = dump.find("\nalloc ", p + 1)) {
    const size_t end = dump.find('\n', p + 1);
    c.alloc_events += dump.substr(p, end - p).find(" func=" + func + " ") != std::string::npos;
  }
  return c;
}

// A second attach's exact call totals count from its own start, not from the
// first attach's: in --all mode they match the calls the trace recorded.
TEST(Attach, SecondAttachCountsCallsFromItsOwnStart) {
  TempDir dir;
  const std::unique_ptr<Child> target = start_target(dir);
  for (const char* trace : {"one.trace", "two.trace"}) {
    const Result a = attach(dir, target->pid(), {"--duration", "1s", "-o", trace, "--all"}, trace);
    ASSERT_EQ(a.status, 0) << a.err;
  }
  std::ofstream(dir / "stop").close();
  EXPECT_EQ(shell_status(target->wait(120s)), 7);
  for (const char* trace : {"one.trace", "two.trace"}) {
    SCOPED_TRACE(trace);
    const Result dump = run(dir, {bin("memloupe"), "dump", trace}, std::string(trace) + ".dump");
    ASSERT_EQ(dump.status, 0) << dump.err;
    const FuncCounts malloc_counts = func_counts(dump.out, "malloc");
    ASSERT_GT(malloc_counts.alloc_events, 100);
    // Calls racing the start or the end may fall on either side; the first
    // attach's second of calls (thousands) may not.
    EXPECT_NEAR(static_cast<double>(malloc_counts.total_calls), static_cast<double>(malloc_counts.alloc_events),
                0.02 * static_cast<double>(malloc_counts.alloc_events) + 20);
  }
}

// A block allocated before the attach and reallocated during it: an allocation
// of its new size by realloc (its old size is unknown), no free of a block the
// trace never saw; summary says so.
TEST(Attach, ReallocOfABlockFromBeforeTheAttachIsANewAllocation) {
  TempDir dir;
  ChildSpec spec{{bin("attach_realloc_target"), dir.path().string()}, target_environment(), dir.path(), {},
                 dir / "target.out", dir / "target.err"};
  Child target(spec);
  ASSERT_TRUE(wait_for_text(dir / "target.out", "ready\n"));
  Child attaching(ChildSpec{{bin("memloupe"), "attach", std::to_string(target.pid()), "--all", "-o", "r.trace",
                             "--duration", "60s"},
                            current_environment(), dir.path(), {}, dir / "attach.out", dir / "attach.err"});
  ASSERT_TRUE(wait_for_text(dir / "attach.err", "memloupe: recording process")) << read_file(dir / "attach.err");
  std::ofstream(dir / "go").close();
  ASSERT_TRUE(wait_for_text(dir / "target.out", "grown\n"));
  const Result detach = run(dir, {bin("memloupe"), "detach", std::to_string(target.pid())}, "detach");
  EXPECT_EQ(detach.status, 0) << detach.err;
  EXPECT_EQ(shell_status(attaching.wait(120s)), 0) << read_file(dir / "attach.err");
  std::ofstream(dir / "stop").close();
  EXPECT_EQ(shell_status(target.wait(120s)), 0);

  const Result dump = run(dir, {bin("memloupe"), "dump", "r.trace"}, "dump");
  ASSERT_EQ(dump.status, 0) << dump.err;
  const size_t grow = dump.out.find("attach_site_grow");
  ASSERT_NE(grow, std::string::npos) << dump.out;
  const size_t line = dump.out.rfind("\nalloc ", grow);
  const std::string alloc = dump.out.substr(line + 1, dump.out.find('\n', line + 1) - line - 1);
  EXPECT_NE(alloc.find(" func=realloc size=5000"), std::string::npos) << alloc;
  EXPECT_EQ(alloc.find("realloc_of"), std::string::npos) << alloc;
  const Result summary = run(dir, {bin("memloupe"), "summary", "r.trace"}, "summary");
  ASSERT_EQ(summary.status, 0) << summary.err;
  EXPECT_NE(summary.out.find("a realloc of a block from before it counts as a new allocation of its new size"),
            std::string::npos)
      << summary.out;
  EXPECT_EQ(summary.out.find("frees named blocks the trace never allocated"), std::string::npos) << summary.out;
}

TEST(Attach, DetachCommandEndsAWaitingAttach) {
  TempDir dir;
  ChildSpec spec{{bin("attach_target"), kIterations, "stop"}, target_environment(), dir.path(), {},
                 dir / "target.out", dir / "target.err"};
  Child target(spec);
  ASSERT_TRUE(wait_for_text(dir / "target.out", "ready\n"));
  ChildSpec attach_spec{{bin("memloupe"), "attach", std::to_string(target.pid()), "-o", "d.trace"},
                        current_environment(), dir.path(), {}, dir / "attach.out", dir / "attach.err"};
  Child waiting(attach_spec);
  ASSERT_TRUE(wait_for_text(dir / "attach.err", "recording process"));
  std::this_thread::sleep_for(500ms);
  const Result detach = run(dir, {bin("memloupe"), "detach", std::to_string(target.pid())}, "detach");
  EXPECT_EQ(detach.status, 0) << detach.err;
  const ChildExit a = waiting.wait(60s);
  EXPECT_EQ(shell_status(a), 0) << read_file(dir / "attach.err");
  EXPECT_NE(read_file(dir / "attach.err").find("wrote"), std::string::npos);
  std::ofstream(dir / "stop").close();
  EXPECT_EQ(shell_status(target.wait(120s)), 7);
}

// The process ends while recorded: its exit handler ends the trace, and attach
// finalises it.
TEST(Attach, ProcessExitingWhileRecorded) {
  TempDir dir;
  Child target({{bin("attach_target"), kIterations}, target_environment(), dir.path(), {}, dir / "t.out", dir / "t.err"});
  ASSERT_TRUE(wait_for_text(dir / "t.out", "ready\n"));
  const Result r = attach(dir, target.pid(), {"--duration", "120s", "-o", "exit.trace"}, "attach");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("exited; its trace ended with it"), std::string::npos) << r.err;
  EXPECT_EQ(shell_status(target.wait(120s)), 7);
  const Result info = run(dir, {bin("memloupe"), "info", "exit.trace"}, "info");
  EXPECT_EQ(event_count(info.out, "trace_end"), 1) << info.out;
  EXPECT_GT(event_count(info.out, "alloc"), 10) << info.out;
}

// A workload that runs for a while, so that the attach lands in the middle of it.
TEST(Attach, Python) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized recorder cannot be loaded into uninstrumented programs";
#endif
  TempDir dir;
  const std::string script =
      "import sys\n"
      "print('ready', flush=True)\n"
      "keep = []\n"
      "for i in range(60):\n"
      "    keep.append([str(j) * 10 for j in range(20000)])\n"
      "    if len(keep) > 5: keep.pop(0)\n"
      "    __import__('time').sleep(0.05)\n"
      "print('done', sum(len(k) for k in keep))\n";
  std::ofstream(dir / "work.py") << script;
  ChildSpec spec{{"/usr/bin/env", "python3", "work.py"}, current_environment(), dir.path(), {},
                 dir / "py.out", dir / "py.err"};
  Child py(spec);
  ASSERT_TRUE(wait_for_text(dir / "py.out", "ready\n"));
  std::this_thread::sleep_for(300ms);
  const Result r = attach(dir, py.pid(), {"--duration", "1s", "-o", "py.trace"}, "attach");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(shell_status(py.wait(120s)), 0) << read_file(dir / "py.err");
  EXPECT_EQ(read_file(dir / "py.out"), "ready\ndone 100000\n");
  const Result info = run(dir, {bin("memloupe"), "info", "py.trace"}, "info");
  EXPECT_GT(event_count(info.out, "alloc"), 10) << info.out;
}

TEST(Attach, Sqlite3) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized recorder cannot be loaded into uninstrumented programs";
#endif
  if (access("/usr/bin/sqlite3", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/sqlite3";
  TempDir dir;
  // A recursive CTE that builds and sorts strings for a few seconds.
  std::ofstream(dir / "work.sql")
      << ".print ready\n"
         "CREATE TABLE t(x TEXT);\n"
         "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 400000)\n"
         "  INSERT INTO t SELECT printf('%08d-%s', (i * 7919) % 400000, hex(randomblob(40))) FROM c;\n"
         "CREATE INDEX tx ON t(x);\n"
         "SELECT count(*), count(DISTINCT substr(x, 1, 3)) FROM t;\n";
  ChildSpec spec{{"/bin/sh", "-c", "/usr/bin/sqlite3 :memory: < work.sql"}, current_environment(), dir.path(), {},
                 dir / "sql.out", dir / "sql.err"};
  Child sh(spec);
  ASSERT_TRUE(wait_for_text(dir / "sql.out", "ready\n"));
  // The shell's child: sqlite3 itself.
  pid_t sqlite = 0;
  for (int i = 0; i < 100 && sqlite == 0; ++i) {
    std::ifstream children("/proc/" + std::to_string(sh.pid()) + "/task/" + std::to_string(sh.pid()) + "/children");
    children >> sqlite;
    if (sqlite == 0) sqlite = sh.pid();  // the shell exec'd it
  }
  const Result r = attach(dir, sqlite, {"--duration", "1s", "-o", "sql.trace"}, "attach");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(shell_status(sh.wait(120s)), 0) << read_file(dir / "sql.err");
  EXPECT_EQ(read_file(dir / "sql.out"), "ready\n400000|4\n");
  const Result info = run(dir, {bin("memloupe"), "info", "sql.trace"}, "info");
  EXPECT_GT(event_count(info.out, "alloc"), 10) << info.out;
}

// ---- refusals: a clear message, and the target untouched ---------------------

// A program that sleeps; its exit status says it ran to the end undisturbed.
struct Sleeper {
  explicit Sleeper(const TempDir& dir, const std::string& program = "/bin/sleep")
      : child({{program, "3"}, current_environment(), dir.path(), {}, dir / "s.out", dir / "s.err"}) {}
  Child child;
};

TEST(AttachRefuses, NoSuchProcess) {
  TempDir dir;
  const Result r = attach(dir, 999999999, {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("no process 999999999"), std::string::npos) << r.err;
}

TEST(AttachRefuses, AProcessAlreadyTraced) {
  TempDir dir;
  Sleeper s(dir);
  const pid_t pid = s.child.pid();
  ASSERT_EQ(ptrace(PTRACE_SEIZE, pid, nullptr, nullptr), 0);
  const Result r = attach(dir, pid, {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("already being traced by process " + std::to_string(getpid())), std::string::npos) << r.err;
  // Detaching needs the tracee stopped.
  ASSERT_EQ(ptrace(PTRACE_INTERRUPT, pid, nullptr, nullptr), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, __WALL), pid);
  ASSERT_EQ(ptrace(PTRACE_DETACH, pid, nullptr, nullptr), 0);
  EXPECT_EQ(shell_status(s.child.wait(30s)), 0);
}

TEST(AttachRefuses, AStoppedProcess) {
  TempDir dir;
  Sleeper s(dir);
  ASSERT_EQ(kill(s.child.pid(), SIGSTOP), 0);
  std::this_thread::sleep_for(100ms);
  const Result r = attach(dir, s.child.pid(), {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("is stopped"), std::string::npos) << r.err;
  kill(s.child.pid(), SIGCONT);
  EXPECT_EQ(shell_status(s.child.wait(30s)), 0);
}

TEST(AttachRefuses, AStaticBinary) {
  TempDir dir;
  Sleeper s(dir, bin("attach_static_target"));
  std::this_thread::sleep_for(100ms);
  const Result r = attach(dir, s.child.pid(), {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("statically linked"), std::string::npos) << r.err;
  EXPECT_EQ(shell_status(s.child.wait(30s)), 0);
}

// Exited, not yet reaped: what an attach racing the exit finds at its first step.
TEST(AttachRefuses, AProcessThatHasExited) {
  TempDir dir;
  Child target({{"/bin/true"}, current_environment(), dir.path(), {}, dir / "t.out", dir / "t.err"});
  std::this_thread::sleep_for(300ms);  // not reaped: a zombie
  const Result r = attach(dir, target.pid(), {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("has exited"), std::string::npos) << r.err;
}

TEST(AttachRefuses, AProcessUnderMemloupeRun) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized preload library cannot be preloaded";
#endif
  TempDir dir;
  Child run({{bin("memloupe"), "run", "-o", "run.trace", "--", bin("attach_target"), "1500"}, current_environment(),
             dir.path(), {}, dir / "run.out", dir / "run.err"});
  ASSERT_TRUE(wait_for_text(dir / "run.out", "ready\n"));
  pid_t target = 0;
  std::ifstream(fs::path("/proc") / std::to_string(run.pid()) / "task" / std::to_string(run.pid()) / "children") >> target;
  ASSERT_GT(target, 0);
  const Result r = attach(dir, target, {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("was started with memloupe's preload library"), std::string::npos) << r.err;
  EXPECT_EQ(shell_status(run.wait(120s)), 7);
}

TEST(AttachRefuses, A32BitProcess) {
  if (access(bin("attach_target32").c_str(), X_OK) != 0) GTEST_SKIP() << "the toolchain cannot build 32-bit programs";
  TempDir dir;
  Child target({{bin("attach_target32")}, current_environment(), dir.path(), {}, dir / "t.out", dir / "t.err"});
  std::this_thread::sleep_for(100ms);
  const Result r = attach(dir, target.pid(), {}, "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("is a 32-bit program"), std::string::npos) << r.err;
  EXPECT_EQ(shell_status(target.wait(30s)), 0);
}

TEST(AttachRefuses, AnotherUsersProcessWhenNotRoot) {
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no setpriv to run memloupe as another user";
  TempDir dir;
  Sleeper s(dir);  // ours (root's, when the tests run as root)
  if (getuid() != 0) GTEST_SKIP() << "needs root to run memloupe as another user";
  fs::permissions(dir.path(), fs::perms::all);
  const Result r = run(dir, {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin("memloupe"),
                             "attach", std::to_string(s.child.pid())},
                       "r");
  EXPECT_EQ(r.status, 5);
  EXPECT_NE(r.err.find("belongs to user 0"), std::string::npos) << r.err;
  EXPECT_EQ(shell_status(s.child.wait(30s)), 0);
}

}  // namespace
}  // namespace memloupe::test_support
