#include "recorder/flush_thread.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include <atomic>
#include <cerrno>

#include "recorder/recorder.h"
#include "recorder/session.h"
#include "recorder/sys.h"

namespace memloupe::recorder {
namespace {

// RSS is sampled this often (and at least once per flush period).
constexpr uint64_t kRssPeriodNs = 50'000'000;

std::atomic<uint32_t> g_flush_tid{0};
// Set before the flush thread is cloned, cleared by it as it returns.
std::atomic<bool> g_flush_running{false};

// The flush thread is made with clone(2), not pthread_create: glibc and
// libstdc++ keep single-threaded fast paths (no lock in malloc/free, plain
// shared_ptr counts) until a second pthread exists, and a profiler's helper
// thread must not take them away (an idle pthread alone costs 10% on a
// single-threaded malloc-heavy loop here). The price: glibc does not know the
// thread, and it has no thread-local storage of its own — it runs on its
// creator's %fs. So everything below leaves TLS alone: raw system calls only
// (sys.h), no errno, no t_state, no dl_iterate_phdr (the loader's lock is keyed
// on the thread descriptor), no allocation.
constexpr size_t kFlushStack = 256 * 1024;
constexpr size_t kGuardPage = 4096;

int flush_main(void*) {
  sys_call(SYS_prctl, PR_SET_NAME, reinterpret_cast<long>("memloupe-flush"));
  const uint64_t flush_period = uint64_t{config().flush_ms} * 1'000'000;
  uint64_t next_flush = monotonic_ns() + flush_period;
  uint64_t next_rss = 0;
  while (tracking()) {
    const uint64_t now = monotonic_ns();
    const bool flush_due = now >= next_flush;
    const bool rss_due = now >= next_rss;
    const uint32_t seen = g_session.flush_wake.begin_round();
    periodic_flush(flush_due, rss_due);
    if (flush_due) next_flush = now + flush_period;
    if (rss_due) next_rss = now + kRssPeriodNs;
    const uint64_t wake_at = next_flush < next_rss ? next_flush : next_rss;
    const uint64_t later = monotonic_ns();
    if (wake_at > later) g_session.flush_wake.wait(seen, wake_at - later);
  }
  g_flush_running.store(false, std::memory_order_release);
  return 0;
}

}  // namespace

void start_flush_thread() noexcept {
  Mapping stack = Mapping::anonymous(kGuardPage + kFlushStack);
  if (stack) sys_call(SYS_mprotect, reinterpret_cast<long>(stack.data()), kGuardPage, PROT_NONE);
  // Blocked signals are inherited: the program's handlers never run on our thread.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  const int saved_errno = errno;
  constexpr int kFlags =
      CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM;
  char* const top = stack ? static_cast<char*>(stack.data()) + kGuardPage + kFlushStack : nullptr;
  g_flush_running.store(true, std::memory_order_release);
  const int tid = top ? ::clone(flush_main, top, kFlags, nullptr) : -1;
  if (tid < 0) g_flush_running.store(false, std::memory_order_release);
  errno = saved_errno;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (tid < 0) {
    (LogLine() << "cannot start the flush thread; the trace is written when the program ends").emit();
    return;
  }
  g_flush_tid.store(static_cast<uint32_t>(tid), std::memory_order_release);
  stack.abandon();  // the thread runs until the process ends
}

uint32_t flush_thread_tid() noexcept { return g_flush_tid.load(std::memory_order_acquire); }

void stop_flush_thread() noexcept {
  const uint64_t give_up = monotonic_ns() + 2 * uint64_t{config().flush_ms} * 1'000'000 + 1'000'000'000;
  while (g_flush_running.load(std::memory_order_acquire) && monotonic_ns() < give_up) {
    g_session.flush_wake.poke();
    const timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace memloupe::recorder
