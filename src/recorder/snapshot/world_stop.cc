#include "recorder/snapshot/world_stop.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "recorder/sys.h"
#include "recorder/unwind/stack_bounds.h"

namespace memloupe::recorder::snapshot {
namespace {

// Static: a late handler (a thread that unblocked the signal after its
// snapshot gave up on it) may still look here, so the table never goes away.
constinit StoppedThread g_threads[kMaxThreads];
constinit std::atomic<size_t> g_count{0};
// Odd while a world is stopped: handlers wait while it is unchanged.
constinit std::atomic<uint32_t> g_phase{0};
constinit std::atomic<uint32_t> g_answers{0};   // handlers that said "stopped"
constinit std::atomic<uint32_t> g_inside{0};    // handlers not yet returned
constinit std::atomic<bool> g_installed{false};

void on_stop_signal(int, siginfo_t*, void* context) {
  const uint32_t phase = g_phase.load(std::memory_order_acquire);
  if ((phase & 1) == 0) return;  // late: that snapshot is over
  g_inside.fetch_add(1, std::memory_order_acq_rel);
  // The stack probe may go through libc (process_vm_readv): the interrupted
  // code's errno must survive.
  const int saved_errno = errno;
  const uint32_t tid = current_tid();
  const size_t n = g_count.load(std::memory_order_acquire);
  StoppedThread* me = nullptr;
  for (size_t i = 0; i < n && me == nullptr; ++i)
    if (g_threads[i].tid == tid) me = &g_threads[i];
  if (me != nullptr && me->stopped.load(std::memory_order_relaxed) == 0) {
    const auto* uc = static_cast<const ucontext_t*>(context);
    for (unsigned r = 0; r < kGeneralRegisters; ++r)
      me->regs[r] = static_cast<uint64_t>(uc->uc_mcontext.gregs[r]);
    me->pc = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RIP]);
    me->sp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
    me->bp = static_cast<uintptr_t>(uc->uc_mcontext.gregs[REG_RBP]);
    const unwind_detail::Span s = unwind_detail::stack_span(me->sp);
    me->stack_begin = s.begin;
    me->stack_end = s.end;
    me->thread_pointer = thread_pointer();
    me->stopped.store(1, std::memory_order_release);
    g_answers.fetch_add(1, std::memory_order_acq_rel);
    futex_wake(reinterpret_cast<const uint32_t*>(&g_answers), 1);
    while (g_phase.load(std::memory_order_acquire) == phase)
      futex_wait(reinterpret_cast<const uint32_t*>(&g_phase), phase);
  }
  errno = saved_errno;
  g_inside.fetch_sub(1, std::memory_order_acq_rel);
  futex_wake(reinterpret_cast<const uint32_t*>(&g_inside), 1);
}

void install() noexcept {
  if (g_installed.exchange(true)) return;
  struct sigaction sa {};
  sa.sa_sigaction = on_stop_signal;
  // SA_RESTART: a stopped read(2) or futex wait resumes instead of failing with
  // EINTR, so the program does not notice.
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&sa.sa_mask);
  ::sigaction(stop_signal(), &sa, nullptr);
}

// The thread ids of the process, from /proc/self/task (raw getdents64: no heap).
size_t list_tasks(uint32_t self, uint32_t skip) noexcept {
  const int fd = open_file("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  UniqueFd owner(fd);
  alignas(8) char buf[8192];
  size_t n = 0;
  for (;;) {
    const long got = sys_call(SYS_getdents64, fd, reinterpret_cast<long>(buf), sizeof(buf));
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      const auto* d = reinterpret_cast<const dirent64*>(buf + off);
      off += d->d_reclen;
      uint32_t tid = 0;
      const char* c = d->d_name;
      if (*c < '0' || *c > '9') continue;
      for (; *c >= '0' && *c <= '9'; ++c) tid = tid * 10 + static_cast<uint32_t>(*c - '0');
      if (tid == self || tid == skip || n == kMaxThreads) continue;
      StoppedThread& t = g_threads[n++];
      t.tid = tid;
      t.stopped.store(0, std::memory_order_relaxed);
      t.stack_begin = t.stack_end = 0;
    }
  }
  return n;
}

}  // namespace

int stop_signal() noexcept { return SIGRTMAX - 3; }

World stop_world(uint32_t skip_tid, uint64_t timeout_ns) noexcept {
  install();
  // Make sure no handler of an earlier world is still inside before reusing the table.
  g_count.store(0, std::memory_order_release);
  const uint32_t self = current_tid();
  const size_t n = list_tasks(self, skip_tid);
  g_answers.store(0, std::memory_order_relaxed);
  g_count.store(n, std::memory_order_release);
  g_phase.fetch_add(1, std::memory_order_acq_rel);  // odd: stopping
  const long pid = sys_call(SYS_getpid);
  size_t sent = 0;
  for (size_t i = 0; i < n; ++i) {
    if (sys_call(SYS_tgkill, pid, g_threads[i].tid, stop_signal()) == 0) ++sent;
    // A thread that exited meanwhile simply never answers.
  }
  const uint64_t give_up = monotonic_ns() + timeout_ns;
  for (;;) {
    const uint32_t answered = g_answers.load(std::memory_order_acquire);
    if (answered >= sent) break;
    const uint64_t now = monotonic_ns();
    if (now >= give_up) break;
    futex_wait(reinterpret_cast<const uint32_t*>(&g_answers), answered,
               give_up - now < 10'000'000 ? give_up - now : 10'000'000);
  }
  World w;
  w.threads = g_threads;
  w.count = n;
  w.stopped = g_answers.load(std::memory_order_acquire);
  return w;
}

void resume_world(World& world) noexcept {
  g_phase.fetch_add(1, std::memory_order_acq_rel);  // even: go
  futex_wake(reinterpret_cast<const uint32_t*>(&g_phase), INT32_MAX);
  // Wait (bounded) for the handlers to return, so that the next snapshot does not
  // rewrite the table under one still reading it.
  const uint64_t give_up = monotonic_ns() + 1'000'000'000;
  for (uint32_t inside; (inside = g_inside.load(std::memory_order_acquire)) != 0;) {
    const uint64_t now = monotonic_ns();
    if (now >= give_up) break;
    futex_wait(reinterpret_cast<const uint32_t*>(&g_inside), inside, 1'000'000);
  }
  world.stopped = 0;
}

}  // namespace memloupe::recorder::snapshot
