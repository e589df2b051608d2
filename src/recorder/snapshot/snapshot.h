// Heap snapshots, taken inside the traced process (docs/RETENTION.md, "Taking
// a snapshot"): the live blocks of the address table, the roots (writable
// segments of the loaded modules, each thread's stack frames, registers and
// static TLS) and the edges a conservative scan finds, written into the trace
// as Snapshot chunks (format/snapshot_wire.h).
//
// When: at exit (MEMLOUPE_SNAPSHOT_AT_EXIT, on by default), on
// memloupe_snapshot(label), and on MEMLOUPE_SNAPSHOT_SIGNAL. Only in --all mode:
// a sampled trace knows the address of one block in thousands, so a pointer
// chain through any unsampled block would break and everything behind it would
// look lost. A reduced snapshot would therefore misreport leaks; it is refused
// with a message instead.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::snapshot {

// The callee-saved registers of the program's code at the call into the API
// (the registers the caller may keep pointers in across the call): rbx, rbp,
// r12-r15. Taken first thing in the API function, before its code changes them.
struct CallerRegs {
  uint64_t words[6];
};
#define MEMLOUPE_CAPTURE_CALLER_REGS(r)                                                        \
  asm volatile("movq %%rbx, 0(%0)\n\tmovq %%rbp, 8(%0)\n\tmovq %%r12, 16(%0)\n\t"              \
               "movq %%r13, 24(%0)\n\tmovq %%r14, 32(%0)\n\tmovq %%r15, 40(%0)"                \
               :                                                                               \
               : "r"((r).words)                                                                \
               : "memory")

// Takes a snapshot now, on the calling thread (its hooks parked). Returns 0, or
// -1 when none was taken (not recording, sampled mode, another snapshot under
// way); the reason is reported once on stderr.
int take_snapshot(const char* label, bool at_exit, const CallerRegs* caller) noexcept;

// From the constructor: reads what later snapshots need from the loader and, if
// MEMLOUPE_SNAPSHOT_SIGNAL is set, installs its handler and starts the thread
// that takes the snapshots it asks for.
void init_snapshots() noexcept;

// From the exit handler, before the trace ends.
void snapshot_at_exit() noexcept;

}  // namespace memloupe::recorder::snapshot
