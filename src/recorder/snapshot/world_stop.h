// Stopping every other thread of the process while a heap snapshot is taken, and
// collecting what the scan needs from each: its registers, where its stack
// is, and its thread pointer (for its static TLS).
//
// Each thread is sent kStopSignal (tgkill). Its handler copies the interrupted
// registers out of the ucontext, finds the extent of the stack they point into,
// says "stopped" and waits on a futex until resume_world(). The handler takes no
// lock and allocates nothing, so a thread stopped while holding the allocator's
// lock, the loader's lock or any of the program's is harmless: the snapshot
// needs none of them (the taker holds the trace lock and the loader lock itself
// before stopping anyone; snapshot.cc).
//
// Threads that never answer within the timeout (they block the signal, like the
// recorder's own flush thread, which is skipped by its tid) are counted; their
// stacks and registers are not scanned.
#pragma once

#include <sys/ucontext.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::snapshot {

// A real-time signal few programs use; installed once, on the first snapshot,
// and never removed (a late delivery to a thread that had it blocked must still
// find a handler, not the default action, which ends the process).
int stop_signal() noexcept;

inline constexpr size_t kMaxThreads = 4096;
inline constexpr unsigned kGeneralRegisters = 16;  // gregs[REG_R8 .. REG_RSP]

struct StoppedThread {
  uint32_t tid = 0;
  std::atomic<uint32_t> stopped{0};  // set by the thread's handler
  uint64_t regs[kGeneralRegisters] = {};
  uintptr_t pc = 0, sp = 0, bp = 0;
  uintptr_t stack_begin = 0, stack_end = 0;  // readable extent around sp; 0: unknown
  uintptr_t thread_pointer = 0;              // %fs base
};

struct World {
  StoppedThread* threads = nullptr;  // [0, count): signalled; those with `stopped` set answered
  size_t count = 0;
  size_t stopped = 0;
};

// Stops every thread but the caller and `skip_tid`; waits at most `timeout_ns`
// for their answers. Only one world may be stopped at a time.
World stop_world(uint32_t skip_tid, uint64_t timeout_ns) noexcept;
// Lets them go and waits (bounded) until they have left the handler.
void resume_world(World& world) noexcept;

// The calling thread's thread pointer.
inline uintptr_t thread_pointer() noexcept {
  uintptr_t tp;
  asm volatile("mov %%fs:0, %0" : "=r"(tp));
  return tp;
}

}  // namespace memloupe::recorder::snapshot
