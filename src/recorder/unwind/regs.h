// The registers an unwind starts from, and the macro that takes them. Apart from
// unwind.h so that the fast unwinder, which unwind.cc calls, can name them
// without including the interface it implements.
#pragma once

#include <cstdint>

namespace memloupe::recorder {

// The registers a walk starts from, taken inside a function F by
// MEMLOUPE_CAPTURE_REGS. `pc` is the address just after the lea, so it (and pc - 1)
// lies in F at an instruction where `sp` and `bp` hold exactly the values read:
// the CFI row at pc describes them.
struct UnwindRegs {
  uintptr_t pc = 0, sp = 0, bp = 0;
};

// Early-clobber outputs: no output may share a register with RBP before it is read.
#define MEMLOUPE_CAPTURE_REGS(regs)                                                  \
  asm volatile("leaq 0(%%rip), %0\n\tmovq %%rsp, %1\n\tmovq %%rbp, %2"              \
               : "=&r"((regs).pc), "=&r"((regs).sp), "=&r"((regs).bp))

}  // namespace memloupe::recorder
