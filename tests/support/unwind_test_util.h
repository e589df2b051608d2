// Test helpers: run every unwinder from one frame, and record expected chains.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "recorder/unwind/fast_unwind.h"

namespace memloupe::recorder::unwind_detail {

struct Stacks {
  std::vector<uint64_t> fast;  // fast_unwind_here (no fallback)
  Outcome outcome = Outcome::kComplete;
  std::vector<uint64_t> api;        // unwind_here (fast, libunwind on fallback)
  std::vector<uint64_t> libunwind;  // libunwind_backtrace
};

// Runs the three unwinders from inside this function, each skipping its own return
// address there, so every result starts with capture_stacks' return address.
Stacks capture_stacks(size_t max_frames = 512, size_t skip = 0);

// The return address of the function this is expanded in; appended after the
// recursive call returns, a recursion records its chain innermost first.
#define MEMLOUPE_RECORD_RA(chain) \
  (chain).push_back(reinterpret_cast<uintptr_t>(__builtin_return_address(0)))

// Index at which `chain` occurs contiguously in `frames`, or -1.
long find_chain(const std::vector<uint64_t>& frames, const std::vector<uint64_t>& chain);

// Defeats tail calls and inlining of the call site around it.
#define MEMLOUPE_KEEP_FRAME() asm volatile("" ::: "memory")

}  // namespace memloupe::recorder::unwind_detail
