// The hooks' out-of-line slow paths (record.cc): a sampled or --all call is
// recorded here, and the inline fast paths (hook_paths.h) tail-call into these.
// Declared apart from hook_paths.h so that record.cc includes its own header and
// not the hooks' bodies that call it.
#pragma once

#include <cstdint>

#include "format/funcs.h"
#include "recorder/real_call.h"
#include "recorder/thread_state.h"
#include "recorder/unwind/regs.h"

namespace memloupe::recorder {

using format::Func;

struct AllocRequest {
  Func func;
  uint64_t size;
  uint32_t alignment;  // 0: the function's natural alignment
  // Registers taken in the hook's cold entry, where a backtrace starts: its first
  // address is the cold entry's return address (in the hook or the program), and
  // the recorder's frames below it are never stepped.
  const UnwindRegs* start;
};

[[gnu::noinline]] void* allocate_slow(const AllocRequest& r, RealCall call) noexcept;
[[gnu::noinline]] void* reallocate_slow(const AllocRequest& r, void* old, RealCall call) noexcept;
[[gnu::noinline]] void release_slow(Func f, void* p, bool counted) noexcept;
// release_slow without the real free: records the end of a recorded block at
// `p` (munmap of a recorded mapping: the caller unmaps it afterwards).
[[gnu::noinline]] void forget_slow(Func f, void* p, bool counted) noexcept;

// The calling thread's slot, registering the thread first if needed (for the
// API and the naming hook, which may be a thread's first call).
ThreadSlot* current_thread_slot() noexcept;

}  // namespace memloupe::recorder
