// `memloupe live` following a trace while `memloupe run` writes it: the terminal
// view driven in tmux (send-keys, capture-pane), and the text lines it prints
// when stdout is not a terminal.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "support/child_process.h"

namespace memloupe::test_support {
namespace {

using namespace std::chrono_literals;

std::string bin(const std::string& name) { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/" + name; }

int run_quiet(const TempDir& dir, std::vector<std::string> argv, std::string* out = nullptr) {
  static int n = 0;
  const std::string tag = "cmd" + std::to_string(n++);
  ChildSpec spec{std::move(argv), current_environment(), dir.path(), {}, dir / (tag + ".out"), dir / (tag + ".err")};
  Child c(spec);
  const ChildExit e = c.wait(60s);
  if (out) *out = read_file(dir / (tag + ".out"));
  return WIFEXITED(e.wait_status) ? WEXITSTATUS(e.wait_status) : -1;
}

// A program writing its trace for several seconds.
std::unique_ptr<Child> start_recorded_program(const TempDir& dir, const char* iterations) {
  return std::make_unique<Child>(ChildSpec{{bin("memloupe"), "run", "-o", "live.trace", "--every", "64KiB", "--",
                                            bin("attach_target"), iterations},
                                           current_environment(), dir.path(), {}, dir / "run.out", dir / "run.err"});
}

class Tmux {
 public:
  explicit Tmux(const TempDir& dir) : dir_(dir), socket_("memloupe-live-test-" + std::to_string(getpid())) {}
  ~Tmux() { run({"kill-server"}); }
  int run(std::vector<std::string> args, std::string* out = nullptr) {
    args.insert(args.begin(), {"/usr/bin/tmux", "-L", socket_});
    return run_quiet(dir_, args, out);
  }
  std::string screen() {
    std::string out;
    run({"capture-pane", "-p", "-t", "live"}, &out);
    return out;
  }
  // Waits until the pane shows `text`.
  bool shows(const std::string& text, std::chrono::seconds limit = 20s) {
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (screen().find(text) != std::string::npos) return true;
      std::this_thread::sleep_for(100ms);
    }
    return false;
  }
  bool session_alive() { return run({"has-session", "-t", "live"}) == 0; }

 private:
  const TempDir& dir_;
  std::string socket_;
};

TEST(Live, TerminalViewInTmux) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized recorder cannot be loaded into uninstrumented programs";
#endif
  if (access("/usr/bin/tmux", X_OK) != 0) GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh)";
  TempDir dir;
  auto program = start_recorded_program(dir, "8000");
  Tmux tmux(dir);
  ASSERT_EQ(tmux.run({"new-session", "-d", "-s", "live", "-x", "140", "-y", "40", "-c", dir.path().string(),
                      bin("memloupe") + " live live.trace"}),
            0);
  ASSERT_TRUE(tmux.shows("top sites by live bytes in all threads")) << tmux.screen();
  // Named while the trace has no symbols yet, with the heap and RSS lines.
  ASSERT_TRUE(tmux.shows("attach_site_alpha")) << tmux.screen();
  EXPECT_NE(tmux.screen().find("rss "), std::string::npos);
  // The threads with sampled blocks: the three workers at least.
  EXPECT_NE(tmux.screen().find("threads ("), std::string::npos) << tmux.screen();
  EXPECT_NE(tmux.screen().find(" attach_target    live "), std::string::npos) << tmux.screen();

  tmux.run({"send-keys", "-t", "live", "s"});
  EXPECT_TRUE(tmux.shows("top sites by change")) << tmux.screen();
  tmux.run({"send-keys", "-t", "live", "s"});
  EXPECT_TRUE(tmux.shows("top sites by allocated bytes")) << tmux.screen();
  tmux.run({"send-keys", "-t", "live", "t"});
  EXPECT_TRUE(tmux.shows("in thread ")) << tmux.screen();
  tmux.run({"send-keys", "-t", "live", "a"});
  EXPECT_TRUE(tmux.shows("in all threads")) << tmux.screen();
  tmux.run({"send-keys", "-t", "live", "q"});
  const auto until = std::chrono::steady_clock::now() + 10s;
  while (tmux.session_alive() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(tmux.session_alive()) << "q did not end memloupe live";
  EXPECT_EQ(program->wait(120s).wait_status, 7 << 8);
}

TEST(Live, TextLinesWhenNotATerminal) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized recorder cannot be loaded into uninstrumented programs";
#endif
  TempDir dir;
  auto program = start_recorded_program(dir, "2500");
  std::string out;
  // Returns by itself once the trace has ended.
  ASSERT_EQ(run_quiet(dir, {bin("memloupe"), "live", "live.trace", "--interval", "0.5"}, &out), 0);
  EXPECT_EQ(program->wait(120s).wait_status, 7 << 8);
  size_t lines = 0;
  for (char c : out) lines += c == '\n';
  EXPECT_GE(lines, 2u) << out;
  EXPECT_NE(out.find(" heap "), std::string::npos) << out;
  EXPECT_NE(out.find(" top "), std::string::npos) << out;
  EXPECT_NE(out.find("(trace ended)\n"), std::string::npos) << out;
}


// `memloupe run --live`: the view opens at once on the trace being written,
// the program's output goes to TRACE.out (the terminal is the view's), and
// after q the trace is finalised and run exits with the program's status.
TEST(Live, RunLiveOpensTheViewAtOnce) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized recorder cannot be loaded into uninstrumented programs";
#endif
  if (access("/usr/bin/tmux", X_OK) != 0) GTEST_SKIP() << "tmux is not installed (scripts/install-deps.sh)";
  TempDir dir;
  Tmux tmux(dir);
  // The session's shell leaves run's exit status and its stderr behind.
  const std::string command = bin("memloupe") + " run --live --every 64KiB -o live.trace -- " +
                              bin("attach_target") + " 5000 2>run.err; echo $? > status";
  ASSERT_EQ(tmux.run({"new-session", "-d", "-s", "live", "-x", "140", "-y", "40", "-c", dir.path().string(),
                      "sh", "-c", command}),
            0);
  ASSERT_TRUE(tmux.shows("top sites by live bytes in all threads")) << tmux.screen();
  ASSERT_TRUE(tmux.shows("attach_site_alpha")) << tmux.screen();
  tmux.run({"send-keys", "-t", "live", "s"});
  EXPECT_TRUE(tmux.shows("top sites by change")) << tmux.screen();
  // The program's own output never reaches the screen.
  EXPECT_EQ(tmux.screen().find("ready"), std::string::npos) << tmux.screen();
  ASSERT_TRUE(tmux.shows("the program has exited: q to finish", 120s)) << tmux.screen();
  EXPECT_TRUE(tmux.shows("(trace ended)")) << tmux.screen();
  tmux.run({"send-keys", "-t", "live", "q"});
  const auto until = std::chrono::steady_clock::now() + 120s;
  while (tmux.session_alive() && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(100ms);
  ASSERT_FALSE(tmux.session_alive()) << "q did not end memloupe run --live";
  EXPECT_EQ(read_file(dir / "status"), "7\n") << read_file(dir / "run.err");
  const std::string output = read_file(dir / "live.trace.out");
  EXPECT_EQ(output.rfind("ready\n", 0), 0u) << output;
  EXPECT_NE(output.find("reader: x\n"), std::string::npos) << output;
  EXPECT_NE(read_file(dir / "run.err").find("the program's output is in "), std::string::npos);
  // Finalised as after any run: symbols embedded.
  std::string info;
  ASSERT_EQ(run_quiet(dir, {bin("memloupe"), "info", "live.trace"}, &info), 0);
  EXPECT_NE(info.find("symbols:      symbols section present"), std::string::npos) << info;
}

// Not on a terminal: one line per refresh, and run returns with the program.
TEST(Live, RunLiveTextLinesWhenNotATerminal) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized recorder cannot be loaded into uninstrumented programs";
#endif
  TempDir dir;
  std::string out;
  EXPECT_EQ(run_quiet(dir, {bin("memloupe"), "run", "--live", "--every", "64KiB", "-o", "t.trace", "--",
                            bin("attach_target"), "2500"},
                      &out),
            7);
  EXPECT_NE(out.find(" heap "), std::string::npos) << out;
  EXPECT_EQ(out.find("ready"), std::string::npos) << out;
  EXPECT_EQ(read_file(dir / "t.trace.out").rfind("ready\n", 0), 0u);
}

}  // namespace
}  // namespace memloupe::test_support
