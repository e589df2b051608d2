#include "attach/remote_call.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "attach/proc_target.h"

namespace memloupe::attach {
namespace {

// Below the x86-64 red zone (128 bytes) the leaf function the thread was
// stopped in may use, with room to spare.
constexpr uint64_t kStackGap = 512;

bool is_event_stop(int status) { return (status >> 16) == PTRACE_EVENT_STOP; }

std::string exited_message(pid_t pid, int status) {
  if (WIFEXITED(status))
    return fmt::format("process {} exited (status {}) during the attach", pid, WEXITSTATUS(status));
  return fmt::format("process {} was killed by signal {} during the attach", pid, WTERMSIG(status));
}

}  // namespace

Expected<TracedThread> TracedThread::seize(pid_t pid, pid_t tid) {
  TracedThread t(pid, tid);
  if (::ptrace(PTRACE_SEIZE, tid, nullptr, nullptr) != 0) return Error{explain_ptrace_error(pid, errno)};
  t.attached_ = true;
  if (::ptrace(PTRACE_INTERRUPT, tid, nullptr, nullptr) != 0) return Error{explain_ptrace_error(pid, errno)};
  for (;;) {
    int status = 0;
    if (::waitpid(tid, &status, __WALL) != tid) return Error{explain_ptrace_error(pid, errno)};
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      t.attached_ = false;
      return Error{exited_message(pid, status)};
    }
    if (!WIFSTOPPED(status)) continue;
    // A signal that arrived first stops the thread too: kept, and delivered when
    // we leave.
    if (!is_event_stop(status)) t.pending_signal_ = WSTOPSIG(status);
    break;
  }
  if (::ptrace(PTRACE_GETREGS, tid, nullptr, &t.saved_) != 0) return Error{explain_ptrace_error(pid, errno)};
  return t;
}

TracedThread::TracedThread(TracedThread&& o) noexcept
    : pid_(o.pid_), tid_(o.tid_), attached_(o.attached_), pending_signal_(o.pending_signal_), saved_(o.saved_) {
  o.attached_ = false;
}

TracedThread::~TracedThread() {
  if (!attached_) return;
  ::ptrace(PTRACE_SETREGS, tid_, nullptr, &saved_);
  ::ptrace(PTRACE_DETACH, tid_, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(pending_signal_)));
}

bool TracedThread::write_memory(uint64_t address, const void* data, size_t size) const {
  const int fd = ::open(fmt::format("/proc/{}/mem", tid_).c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::pwrite(fd, data, size, static_cast<off_t>(address));
  ::close(fd);
  return n == static_cast<ssize_t>(size);
}

std::string TracedThread::read_string(uint64_t address, size_t max) const {
  std::string s(max, '\0');
  const int fd = ::open(fmt::format("/proc/{}/mem", tid_).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const ssize_t n = ::pread(fd, s.data(), max, static_cast<off_t>(address));
  ::close(fd);
  s.resize(n > 0 ? static_cast<size_t>(n) : 0);
  s.resize(std::strlen(s.c_str()));
  return s;
}

Expected<uint64_t> TracedThread::read_word(uint64_t address) const {
  errno = 0;
  const long v = ::ptrace(PTRACE_PEEKDATA, tid_, address, nullptr);
  if (errno != 0) return Error{fmt::format("cannot read process {}'s memory at {:#x}: {}", pid_, address, std::strerror(errno))};
  return static_cast<uint64_t>(v);
}

Expected<uint64_t> TracedThread::call(uint64_t function, const std::vector<Arg>& args,
                                      std::chrono::milliseconds timeout) {
  if (args.size() > 6) return Error{"at most 6 arguments"};
  user_regs_struct r = saved_;
  uint64_t sp = (saved_.rsp - kStackGap) & ~uint64_t{15};
  uint64_t values[6] = {};
  for (size_t i = 0; i < args.size(); ++i) {
    if (const auto* n = std::get_if<uint64_t>(&args[i])) {
      values[i] = *n;
      continue;
    }
    const std::string& s = std::get<std::string>(args[i]);
    sp = (sp - s.size() - 1) & ~uint64_t{15};
    if (!write_memory(sp, s.c_str(), s.size() + 1))
      return Error{fmt::format("cannot write to process {}'s stack: {}", pid_, std::strerror(errno))};
    values[i] = sp;
  }
  // The return address: 0, where the function's return faults and stops the thread.
  const uint64_t zero = 0;
  sp -= 8;
  if (!write_memory(sp, &zero, sizeof(zero)))
    return Error{fmt::format("cannot write to process {}'s stack: {}", pid_, std::strerror(errno))};
  r.rsp = sp;  // at entry rsp + 8 is 16-aligned, as after a call instruction
  r.rip = function;
  r.rax = 0;  // no vector registers used by a variadic call
  r.orig_rax = ~0ull;
  r.rdi = values[0], r.rsi = values[1], r.rdx = values[2], r.rcx = values[3], r.r8 = values[4], r.r9 = values[5];
  if (::ptrace(PTRACE_SETREGS, tid_, nullptr, &r) != 0 || ::ptrace(PTRACE_CONT, tid_, nullptr, nullptr) != 0)
    return Error{explain_ptrace_error(pid_, errno)};

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    const pid_t w = ::waitpid(tid_, &status, __WALL | WNOHANG);
    if (w < 0) return Error{explain_ptrace_error(pid_, errno)};
    if (w == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        // Stop it again to put its registers back: a call that never returns
        // (a lock the thread held itself) must not leave the thread in our code.
        ::ptrace(PTRACE_INTERRUPT, tid_, nullptr, nullptr);
        ::waitpid(tid_, &status, __WALL);
        return Error{fmt::format("the call in process {} (thread {}) did not return within {} s; its "
                                 "registers were put back",
                                 pid_, tid_, timeout.count() / 1000)};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      continue;
    }
    if (WIFEXITED(status) || WIFSIGNALED(status)) {
      attached_ = false;
      return Error{exited_message(pid_, status)};
    }
    if (!WIFSTOPPED(status)) continue;
    const int sig = WSTOPSIG(status);
    if (is_event_stop(status)) {
      ::ptrace(PTRACE_CONT, tid_, nullptr, nullptr);
      continue;
    }
    if (sig == SIGSEGV || sig == SIGBUS) {
      user_regs_struct now{};
      ::ptrace(PTRACE_GETREGS, tid_, nullptr, &now);
      if (now.rip == 0) return now.rax;
      return Error{fmt::format("the call in process {} faulted at {:#x} (signal {}); its registers were put back",
                               pid_, now.rip, sig)};
    }
    // Any other signal is the program's: delivered as it would have been.
    ::ptrace(PTRACE_CONT, tid_, nullptr, reinterpret_cast<void*>(static_cast<uintptr_t>(sig)));
  }
}

}  // namespace memloupe::attach
