#include "finalize/memory_after_exit.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace memloupe::finalize {
namespace {

// The state letter of /proc/PID/stat ('S', 'Z', ...); 0 once the pid is gone.
char state_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const size_t paren = line.rfind(')');
  return paren == std::string::npos || paren + 2 >= line.size() ? 0 : line[paren + 2];
}

// Resident pages of /proc/PID/statm.
long resident_pages(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident;
}

// Waits up to 10 s for `fd` to be readable (or at its end).
bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 10000) == 1;
}

// A process that touches 64 MiB and hands its memory to the helper, then
// exits when told: the helper holds the memory and no descriptor while the
// process lives, a pipe the process wrote to ends with it, and the helper
// ends after it.
TEST(MemoryAfterExit, TheHelperHoldsTheMemoryUntilTheProcessExitsAndNoDescriptor) {
  int report[2], go[2];
  ASSERT_EQ(pipe(report), 0);
  ASSERT_EQ(pipe(go), 0);
  constexpr size_t kBytes = size_t{64} << 20;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(report[0]);
    close(go[1]);
    // Touched page by page through a volatile pointer: no store may be elided.
    volatile char* memory = static_cast<char*>(std::malloc(kBytes));
    for (size_t i = 0; i < kBytes; i += 4096) memory[i] = 1;
    const pid_t helper = free_memory_after_exit();
    if (write(report[1], &helper, sizeof helper) != sizeof helper) _exit(2);
    char byte;
    if (read(go[0], &byte, 1) != 1) _exit(3);
    std::exit(memory[kBytes - 4096] == 1 ? 0 : 4);  // (exit(), as `memloupe run` ends: handlers run)
  }
  close(report[1]);
  close(go[0]);
  pid_t helper = 0;
  ASSERT_TRUE(readable(report[0]));
  ASSERT_EQ(read(report[0], &helper, sizeof helper), static_cast<ssize_t>(sizeof helper));
  if (helper == 0) {
    close(go[1]);
    waitpid(child, nullptr, 0);
    GTEST_SKIP() << "no helper here (no close_range, or a sanitizer's build)";
  }
  // Alive, sharing the process's memory, with every descriptor closed (wait
  // for its first steps: it closes them before it sleeps).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  auto descriptors = [helper] {
    std::error_code ec;
    const std::filesystem::path dir = "/proc/" + std::to_string(helper) + "/fd";
    return static_cast<long>(std::distance(std::filesystem::directory_iterator(dir, ec), {}));
  };
  while (descriptors() != 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(descriptors(), 0);
  EXPECT_EQ(state_of(helper), 'S');
  EXPECT_GE(resident_pages(helper) * sysconf(_SC_PAGESIZE), static_cast<long>(kBytes));
  ASSERT_EQ(write(go[1], "x", 1), 1);
  close(go[1]);
  // The pipe ends with the process, not with the helper.
  ASSERT_TRUE(readable(report[0]));
  char byte;
  EXPECT_EQ(read(report[0], &byte, 1), 0);
  close(report[0]);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  // Killed by the process's end (its parent's death signal), then reaped by
  // init or a subreaper: a zombie, or gone.
  char state = state_of(helper);
  while (state != 0 && state != 'Z' && state != 'X' && std::chrono::steady_clock::now() < deadline + std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    state = state_of(helper);
  }
  EXPECT_TRUE(state == 0 || state == 'Z' || state == 'X') << state;
}

// MEMLOUPE_EXIT_HELPER=0 makes none: the exit frees the memory itself (asked
// in a child, which would otherwise hand its memory over).
TEST(MemoryAfterExit, NoHelperWhenTheEnvironmentSaysSo) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    setenv("MEMLOUPE_EXIT_HELPER", "0", 1);
    _exit(free_memory_after_exit() == 0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace memloupe::finalize
