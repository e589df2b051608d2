#include "recorder/lifecycle.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

#include "recorder/exec_follow.h"
#include "recorder/map_hooks.h"
#include "recorder/recorder.h"
#include "recorder/snapshot/snapshot.h"
#include "recorder/sys.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder {
namespace {

// RSS is sampled this often (and at least once per flush period).
constexpr uint64_t kRssPeriodNs = 50'000'000;

pthread_key_t g_exit_key;
std::atomic<bool> g_exit_key_ok{false};

// Bumped (then futex-woken) to make the flush thread drain early.
std::atomic<uint32_t> g_flush_wake{0};
std::atomic<bool> g_wake_pending{false};
std::atomic<uint32_t> g_flush_tid{0};
// Set before the flush thread is cloned, cleared by it as it returns.
std::atomic<bool> g_flush_running{false};
std::atomic<bool> g_handlers_installed{false};

// pthread runs key destructors in up to PTHREAD_DESTRUCTOR_ITERATIONS rounds while
// values are set. Re-arming until the last round lets allocations made by other
// keys' destructors (and C++ thread_local destructors, which run before all of
// them) still be recorded and counted.
void on_thread_exit(void* arg) {
  ThreadState& t = t_state;
  auto* slot = static_cast<ThreadSlot*>(arg);
  if (++t.exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
    pthread_setspecific(g_exit_key, slot);  // no allocation: registration made the slot
    return;
  }
  t.phase = Phase::InHook;
  t.countdown = kParked;
  if (slot->announced && tracking()) {
    // The name again: a thread may have renamed itself with prctl(PR_SET_NAME),
    // which no hook sees.
    char name[32];
    const size_t len = read_thread_name(slot->os_tid, name, sizeof(name));
    const uint64_t now = trace_now_ns();
    const format::ThreadId id{slot->thread_id};
    LockGuard g(g_session.lock);
    if (tracking()) {
      if (len > 0) g_session.encoder().thread_name(id, now, {name, len});
      g_session.encoder().thread_end(id, now);
    }
  }
  g_threads.release(slot);
  t.slot = &g_unregistered_slot;
  t.phase = Phase::Exited;
}

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
    // Read before the work: a wake that arrives during it (draining the staging
    // ring takes a while) then makes the wait below return at once instead of
    // being lost, as the waker saw g_wake_pending set and did not wake again.
    const uint32_t seen = g_flush_wake.load(std::memory_order_acquire);
    g_wake_pending.store(false, std::memory_order_relaxed);
    periodic_flush(flush_due, rss_due);
    if (flush_due) next_flush = now + flush_period;
    if (rss_due) next_rss = now + kRssPeriodNs;
    const uint64_t wake_at = next_flush < next_rss ? next_flush : next_rss;
    const uint64_t later = monotonic_ns();
    if (wake_at > later)
      futex_wait(reinterpret_cast<const uint32_t*>(&g_flush_wake), seen, wake_at - later);
  }
  g_flush_running.store(false, std::memory_order_release);
  return 0;
}

void on_exit_handler() {
  HooksParked parked(t_state);
  snapshot::snapshot_at_exit();
  end_session(format::EndReason::Exit);
}

void on_fork_child() { restart_in_fork_child(t_state); }

__attribute__((constructor)) void on_library_load() {
  HooksParked parked(t_state);
  ensure_process_init();
  const State s = state();
  if (s == State::Uninit || s == State::Off) return;
  // The unwinder's fallback is dlopen'ed here, where that is safe (not inside
  // malloc or a signal handler; our hooks are parked for its allocations). Stacks
  // sampled before this point that need it are recorded as far as the fast
  // unwinder gets.
  unwind_load_fallback();
  note_allocator_module();
  // Which exec'd images record: exec_follow.h.
  prepare_environment_for_exec(config(), g_session.pid);
  install_process_handlers();
  snapshot::init_snapshots();
  if (tracking()) start_flush_thread();
}

}  // namespace

void install_process_handlers() noexcept {
  if (g_handlers_installed.exchange(true, std::memory_order_acq_rel)) return;
  pthread_atfork(nullptr, nullptr, on_fork_child);
  std::atexit(on_exit_handler);
}

void stop_flush_thread() noexcept {
  const uint64_t give_up = monotonic_ns() + 2 * uint64_t{config().flush_ms} * 1'000'000 + 1'000'000'000;
  while (g_flush_running.load(std::memory_order_acquire) && monotonic_ns() < give_up) {
    g_flush_wake.fetch_add(1, std::memory_order_release);
    futex_wake(reinterpret_cast<const uint32_t*>(&g_flush_wake), 1);
    const timespec pause{0, 1'000'000};
    nanosleep(&pause, nullptr);
  }
}

void create_thread_exit_key() noexcept {
  if (!g_exit_key_ok.load(std::memory_order_acquire))
    g_exit_key_ok.store(pthread_key_create(&g_exit_key, on_thread_exit) == 0, std::memory_order_release);
}

void watch_thread_exit(ThreadSlot* slot) noexcept {
  if (g_exit_key_ok.load(std::memory_order_acquire)) pthread_setspecific(g_exit_key, slot);
}

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

void wake_flush_thread() noexcept {
  // Called on every staged record while the ring is filling: a plain load keeps
  // the line shared until a wake is actually due.
  if (g_wake_pending.load(std::memory_order_relaxed) ||
      g_wake_pending.exchange(true, std::memory_order_relaxed))
    return;
  g_flush_wake.fetch_add(1, std::memory_order_release);
  futex_wake(reinterpret_cast<const uint32_t*>(&g_flush_wake), 1);
}

}  // namespace memloupe::recorder
