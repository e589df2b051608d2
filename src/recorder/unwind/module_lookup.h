// Finds the loaded module whose code contains an address, and where its unwind
// tables are in memory.
#pragma once

#include <cstdint>

namespace memloupe::recorder::unwind_detail {

struct Span {
  uintptr_t begin = 0, end = 0;
  bool contains(uintptr_t a, uintptr_t len = 1) const {
    return a >= begin && a <= end && len <= end - a;
  }
};

struct ModuleTables {
  Span text;                   // the executable PT_LOAD segment containing the address
  uintptr_t eh_frame_hdr = 0;  // PT_GNU_EH_FRAME in memory, 0 if the module has none
  Span tables;                 // the readable PT_LOAD segment holding .eh_frame_hdr
};

// Looks `pc` up among the modules the dynamic loader knows (dl_iterate_phdr, which
// includes the main program and the vDSO). Takes the loader's recursive lock; no
// allocation. Returns false if no module's executable segment contains `pc`.
bool find_module(uintptr_t pc, ModuleTables& out) noexcept;

}  // namespace memloupe::recorder::unwind_detail
