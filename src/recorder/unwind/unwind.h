// Unwinding the calling thread's stack from inside malloc.
//
// Contract (the recorder relies on it): async-signal-safe enough to run inside a
// malloc hook — no allocation through the hooked functions, no locks that the
// program could hold, never crashes on a bad frame (stops instead).
#pragma once

#include <cstddef>
#include <cstdint>

#include "recorder/unwind/regs.h"
#include "recorder/unwind/unwind_share.h"

namespace memloupe::recorder {

// Writes up to `max_frames` return addresses of the calling thread into `out`,
// innermost first, skipping the innermost `skip` frames (the hook's own frames),
// and returns how many were written.
//
// With skip == 0, out[0] is unwind_here's own return address (an address inside
// its caller), out[1] the caller's return address, and so on. An address after a
// signal frame is the interrupted instruction itself, as libunwind reports it.
// Safe to call from any thread concurrently and from signal handlers, also one
// that interrupted unwind_here on the same thread. See docs/UNWINDING.md.
size_t unwind_here(uint64_t* out, size_t max_frames, size_t skip) noexcept;

// As unwind_here, from registers taken further out: out[0] is the return address
// of the function F that took `start` (an address in F's caller), out[1] its
// caller's, and so on. The frames between F and this call are never stepped, which
// is what makes it cheaper than unwind_here plus dropping them. F must still be
// running, in a frame that stays put: no tail call out of it (the recorder's hook
// entry takes the registers and ends with a compiler barrier).
//
// On the rare stacks that go to libunwind (see unwind_here), the frames up to F are
// dropped by finding F's return address among the first kMaxFramesToStart
// addresses; if the walk could not even leave F, the result is unwind_here's from
// this call (it starts with the frames between F and here: callers that may be
// handed those must drop them, as the recorder drops its own).
//
// With `share`, also says what the thread's tail memo knows of the outer
// frames (unwind_share.h).
size_t unwind_from(const UnwindRegs& start, uint64_t* out, size_t max_frames,
                   UnwindShare* share = nullptr) noexcept;
inline constexpr size_t kMaxFramesToStart = 32;

// Loads libunwind, the fallback for stacks the fast unwinder cannot finish, privately
// (see libunwind_backtrace.h for why it is not linked). Call it once at a safe point
// (a constructor, the caller's hooks parked: dlopen allocates and takes the loader's
// lock). Until it has succeeded, unwind_here returns such a stack as far as the fast
// unwinder got. Returns whether libunwind is usable.
bool unwind_load_fallback() noexcept;

// Called after dlopen/dlclose so cached per-module unwind tables are refreshed.
// Call it as soon as dlclose returns: until then, rules cached for the unloaded
// code may be applied to whatever is mapped at the same addresses next.
void unwind_modules_changed() noexcept;

}  // namespace memloupe::recorder
