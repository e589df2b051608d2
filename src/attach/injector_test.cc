// The injector's parts on real processes: /proc parsing, the ELF lookup against
// this process's own libc, and a remote call into a forked child.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "attach/elf_symbol.h"
#include "attach/proc_target.h"
#include "attach/remote_call.h"

namespace memloupe::attach {
namespace {

TEST(ProcTarget, RecognisesTheCLibrary) {
  EXPECT_TRUE(is_libc("/usr/lib/x86_64-linux-gnu/libc.so.6"));
  EXPECT_TRUE(is_libc("/lib/libc-2.31.so"));
  EXPECT_FALSE(is_libc("/usr/lib/libcrypt.so.1"));
  EXPECT_FALSE(is_libc("/usr/lib/libc++.so.1"));
}

TEST(ProcTarget, ThisProcessPassesTheChecks) {
  const auto ok = check_target(getpid());
  EXPECT_TRUE(ok.ok()) << (ok ? "" : ok.error().message);
  const auto none = check_target(999999999);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "no process 999999999");
}

TEST(ProcTarget, MainThreadFirst) {
  std::atomic<bool> stop{false};
  std::thread other([&] {
    while (!stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  const auto tids = threads_of(getpid());
  stop.store(true);
  other.join();
  ASSERT_GE(tids.size(), 2u);
  EXPECT_EQ(tids.front(), getpid());
}

TEST(ProcTarget, PermissionErrorSaysWhatToChange) {
  const std::string why = explain_ptrace_error(1234, EPERM);
  EXPECT_NE(why.find("not permitted to trace process 1234"), std::string::npos);
  EXPECT_NE(why.find("CAP_SYS_PTRACE"), std::string::npos) << why;
  EXPECT_EQ(explain_ptrace_error(1234, ESRCH), "process 1234 exited during the attach");
}

// The file lookup gives what the loader gave this process.
TEST(ElfSymbol, FindsFunctionsInOurOwnLibc) {
  const auto libc = find_module(read_maps(getpid()), is_libc);
  ASSERT_TRUE(libc.has_value());
  void* loaded = dlsym(RTLD_DEFAULT, "getpid");
  const auto getpid_offset = dynamic_symbol(libc->path, "getpid");
  ASSERT_TRUE(getpid_offset.ok());
  EXPECT_EQ(libc->base + getpid_offset.value(), reinterpret_cast<uint64_t>(loaded));
  const auto missing = dynamic_symbol(libc->path, "no_such_function_here");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no function no_such_function_here"), std::string::npos);
}

// A forked child has this process's layout: it is made to call libc's strlen on
// a string copied onto its stack, then goes on and exits as it would have.
TEST(RemoteCall, CallsAFunctionInAChildAndLeavesItUnharmed) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(ready[0]);
    (void)!write(ready[1], "r", 1);
    // Blocked in a system call when stopped; EINTR retried.
    for (int slept = 0; slept < 6; ++slept) {
      timespec t{0, 100'000'000};
      while (nanosleep(&t, &t) != 0) {
      }
    }
    _exit(42);
  }
  close(ready[1]);
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  {
    auto t = TracedThread::seize(child, child);
    ASSERT_TRUE(t.ok()) << t.error().message;
    const uint64_t fn = reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "strlen"));
    const auto n = t->call(fn, {std::string("seventeen letters")});
    ASSERT_TRUE(n.ok()) << n.error().message;
    EXPECT_EQ(n.value(), 17u);
    const auto pid = t->call(reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "getpid")), {});
    ASSERT_TRUE(pid.ok());
    EXPECT_EQ(pid.value(), static_cast<uint64_t>(child));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 42);
}

}  // namespace
}  // namespace memloupe::attach
