// The gate keeps a fork from happening while the recorder walks the modules:
// a child forked during a walk of the loader's list (which holds a lock glibc
// does not reset in the child) waits forever at its own walk.
#include "recorder/module_walk_gate.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace memloupe::recorder {
namespace {

std::atomic<bool> g_inside{false};

// Stays 50 ms in the walk (under the prepare handler's 100 ms bound).
int slow_visit(dl_phdr_info*, size_t, void*) {
  g_inside.store(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  return 1;
}

int count_visit(dl_phdr_info*, size_t, void* data) {
  ++*static_cast<int*>(data);
  return 0;
}

void install_handlers() {
  static const bool installed = [] {
    pthread_atfork(close_module_walks_for_fork, [] { open_module_walks_after_fork(false); },
                   [] { open_module_walks_after_fork(true); });
    return true;
  }();
  (void)installed;
}

// Forks while another thread is inside a slow walk (through the gate or not);
// whether the child's own walk ended (a child still waiting after 2 s is
// killed by its alarm).
bool child_walks_after_a_fork_during_a_walk(bool gated) {
  install_handlers();
  g_inside.store(false);
  std::thread walker([gated] {
    if (gated) {
      EXPECT_TRUE(gated_module_walk(slow_visit, nullptr));
    } else {
      dl_iterate_phdr(slow_visit, nullptr);
    }
  });
  while (!g_inside.load()) std::this_thread::yield();
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(2);
    int modules = 0;
    dl_iterate_phdr(count_visit, &modules);
    _exit(modules > 0 ? 0 : 1);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {}
  walker.join();
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(ModuleWalkGate, AForkDuringAGatedWalkLeavesAChildThatCanWalk) {
  if (child_walks_after_a_fork_during_a_walk(/*gated=*/false)) {
    GTEST_SKIP() << "this C library resets the loader's lock in a fork child: nothing to guard";
  }
  EXPECT_TRUE(child_walks_after_a_fork_during_a_walk(/*gated=*/true));
}

TEST(ModuleWalkGate, AWalkWhileAForkIsPendingIsSkipped) {
  int modules = 0;
  close_module_walks_for_fork();
  EXPECT_FALSE(gated_module_walk(count_visit, &modules));
  EXPECT_EQ(modules, 0);
  open_module_walks_after_fork(/*in_child=*/false);
  EXPECT_TRUE(gated_module_walk(count_visit, &modules));
  EXPECT_GT(modules, 0);
}

}  // namespace
}  // namespace memloupe::recorder
