// `memloupe run` and signals: the program's death by a signal is reported as a
// shell would, signals sent to memloupe reach the program, and the terminal's
// reach it without memloupe dying of them.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "run_fixture.h"

namespace memloupe::testing {
namespace {

namespace fs = std::filesystem;

TEST_F(Run, KilledBySignalExits128PlusSignal) {
  const Finished f = run({"run", "-o", "t.trace", "--", testprog_exe(), "raise", "15"});
  EXPECT_EQ(f.status, 128 + SIGTERM) << f.err;
}

TEST_F(Run, ForwardsSigtermToTheProgram) {
  Process p({memloupe_exe(), "run", "-o", "t.trace", "--", testprog_exe(), "wait", dir_ / "ready"},
            dir_.path());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(dir_ / "ready") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(fs::exists(dir_ / "ready"));
  kill(p.pid(), SIGTERM);  // to memloupe, not to the program
  const Finished f = p.wait();
  EXPECT_EQ(f.status, 128 + SIGTERM) << f.err;
  EXPECT_NE(f.err.find("memloupe: wrote"), std::string::npos) << f.err;
}

// Ctrl-C on a terminal: the kernel signals the whole foreground process
// group, memloupe and the program alike. The program gets it (once: memloupe
// does not pass on a second one, although the kernel would also merge a
// second SIGINT arriving while the first is pending, so a regression there
// may go unseen), and memloupe survives it to finalise the trace and exit
// with the program's status. Here on a pseudo-terminal, with memloupe as the
// session leader.
TEST_F(Run, TerminalCtrlCReachesTheProgramAndMemloupeFinishes) {
  const int master = posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(grantpt(master), 0);
  ASSERT_EQ(unlockpt(master), 0);
  const std::string slave = ptsname(master);
  const std::string ready = dir_ / "ready";
  std::vector<std::string> args = {memloupe_exe(), "run", "-o", dir_ / "t.trace", "--",
                                   testprog_exe(), "count-sigint", ready};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    // A new session whose controlling terminal is the pty; its process group
    // (memloupe's, which the program shares) is the foreground one.
    setsid();
    const int fd = open(slave.c_str(), O_RDWR);
    if (fd < 0 || ioctl(fd, TIOCSCTTY, 0) != 0) _exit(120);
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    execv(argv[0], argv.data());
    _exit(121);
  }
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!fs::exists(ready) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_TRUE(fs::exists(ready));
  const char ctrl_c = 3;  // VINTR of a fresh terminal
  EXPECT_EQ(write(master, &ctrl_c, 1), 1);
  // Drain the terminal while waiting, so memloupe never blocks writing to it.
  int status = 0;
  for (;;) {
    char buf[256];
    pollfd p{master, POLLIN, 0};
    if (poll(&p, 1, 50) > 0 && read(master, buf, sizeof buf) <= 0) {
      // EIO once the last slave fd is closed.
    }
    const pid_t done = waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    ASSERT_LT(std::chrono::steady_clock::now(), deadline + std::chrono::seconds(10));
  }
  close(master);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 1);  // the program's status: one SIGINT received
  auto r = open_or_fail(dir_ / "t.trace");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->has_symbols_section());
}


}  // namespace
}  // namespace memloupe::testing
