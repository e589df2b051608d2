// One thread of another process, stopped under ptrace, made to call a function.
//
// The call: the thread's registers are saved, the arguments (strings are copied
// onto its stack below the red zone) put in rdi/rsi, rsp moved below them with a
// return address of 0 pushed, rip set to the function and orig_rax to -1 (so that
// a system call the thread was stopped in is not restarted over our call). The
// function returns to address 0, the fault stops the thread again, its rax is the
// result, and the saved registers go back: a system call it was in is restarted
// by the kernel as after any signal with no handler (or fails with EINTR where
// the call cannot be restarted).
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "format/expected.h"

namespace memloupe::attach {

class TracedThread {
 public:
  // PTRACE_SEIZE + PTRACE_INTERRUPT, and waits for the stop.
  static Expected<TracedThread> seize(pid_t pid, pid_t tid);
  TracedThread(TracedThread&& other) noexcept;
  TracedThread& operator=(TracedThread&&) = delete;
  ~TracedThread();  // detaches, with its registers as they were

  const user_regs_struct& regs() const { return saved_; }

  // Calls `function` with up to 6 arguments; a std::string argument is passed
  // as the address of a NUL-terminated copy in the target. Gives up (and says
  // the target may be stuck) after `timeout`.
  using Arg = std::variant<uint64_t, std::string>;
  Expected<uint64_t> call(uint64_t function, const std::vector<Arg>& args,
                          std::chrono::milliseconds timeout = std::chrono::seconds(20));

  // A NUL-terminated string in the target (up to `max` bytes).
  std::string read_string(uint64_t address, size_t max = 1024) const;
  Expected<uint64_t> read_word(uint64_t address) const;

 private:
  TracedThread(pid_t pid, pid_t tid) : pid_(pid), tid_(tid) {}
  bool write_memory(uint64_t address, const void* data, size_t size) const;

  pid_t pid_ = 0, tid_ = 0;
  bool attached_ = false;
  int pending_signal_ = 0;  // a signal the thread stopped with, delivered at detach
  user_regs_struct saved_{};
};

}  // namespace memloupe::attach
