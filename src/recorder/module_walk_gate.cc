#include "recorder/module_walk_gate.h"

#include <sys/syscall.h>

#include <atomic>
#include <cstdint>

#include "recorder/sys.h"

namespace memloupe::recorder {
namespace {

// The walks under way, and the forks that wait for them. Sequentially
// consistent on both sides: a walk and a fork's prepare each write their own
// word, then read the other's, so at least one of them sees the other.
std::atomic<uint32_t> g_walks{0};
std::atomic<uint32_t> g_forks_pending{0};

}  // namespace

bool gated_module_walk(int (*callback)(dl_phdr_info*, size_t, void*), void* data) noexcept {
  g_walks.fetch_add(1, std::memory_order_seq_cst);
  const bool go = g_forks_pending.load(std::memory_order_seq_cst) == 0;
  if (go) dl_iterate_phdr(callback, data);
  g_walks.fetch_sub(1, std::memory_order_release);
  return go;
}

void close_module_walks_for_fork() noexcept {
  g_forks_pending.fetch_add(1, std::memory_order_seq_cst);
  // A walk's callbacks are short and take no lock. Bounded all the same: the
  // forking thread may be inside a walk itself (a fork from a signal handler
  // that interrupted one), which would never end while it waits.
  const uint64_t until = monotonic_ns() + 100'000'000;
  while (g_walks.load(std::memory_order_seq_cst) != 0 && monotonic_ns() < until) sys_call(SYS_sched_yield);
}

void open_module_walks_after_fork(bool in_child) noexcept {
  if (in_child) {
    // The child's only thread is the forking one: no walk is under way there,
    // whatever the count says (a walk counted itself, then found the gate closed).
    g_walks.store(0, std::memory_order_relaxed);
    g_forks_pending.store(0, std::memory_order_release);
    return;
  }
  g_forks_pending.fetch_sub(1, std::memory_order_release);
}

}  // namespace memloupe::recorder
