#include "recorder/unwind/unwind.h"

#include "recorder/unwind/fast_unwind.h"
#include "recorder/unwind/libunwind_backtrace.h"
#include "recorder/unwind/rule_cache.h"
#include "recorder/unwind/tail_memo.h"
#include "recorder/unwind/unwind_stats.h"

namespace memloupe::recorder {

__attribute__((noinline)) size_t unwind_here(uint64_t* out, size_t max_frames,
                                             size_t skip) noexcept {
  unwind_detail::Regs regs;
  MEMLOUPE_CAPTURE_REGS(regs);
  const unwind_detail::FastResult r = unwind_detail::fast_unwind(regs, out, max_frames, skip);
  if (r.outcome != unwind_detail::Outcome::kFallback) return r.frames;
  unwind_detail::count_fallback();
  if (!unwind_detail::libunwind_loaded()) return r.frames;  // as far as the fast unwinder got
  // libunwind starts in libunwind_backtrace; +1 skips our own return address.
  const size_t n = unwind_detail::libunwind_backtrace(out, max_frames, skip + 1);
  asm volatile("" ::: "memory");  // not a tail call: our frame must stay on the stack
  return n;
}

__attribute__((noinline)) size_t unwind_from(const UnwindRegs& start, uint64_t* out,
                                             size_t max_frames, UnwindShare* share) noexcept {
  if (share != nullptr) share->walk = share->previous = 0;
  const unwind_detail::FastResult r = unwind_detail::fast_unwind(start, out, max_frames, 0, share);
  if (r.outcome != unwind_detail::Outcome::kFallback) return r.frames;
  if (share != nullptr) share->walk = share->previous = 0;  // libunwind's frames are not the walk's
  unwind_detail::count_fallback();
  if (!unwind_detail::libunwind_loaded()) return r.frames;  // as far as the fast unwinder got
  // libunwind starts in libunwind_backtrace; skip 1 starts at our return address.
  size_t to_start = 0;  // frames from our return address to F's
  if (r.frames > 0) {
    uint64_t near[kMaxFramesToStart];
    const size_t n = unwind_detail::libunwind_backtrace(near, kMaxFramesToStart, 1);
    while (to_start < n && near[to_start] != out[0]) ++to_start;
    if (to_start == n) to_start = 0;
  }
  const size_t n = unwind_detail::libunwind_backtrace(out, max_frames, 1 + to_start);
  asm volatile("" ::: "memory");  // not a tail call: our frame must stay on the stack
  return n;
}

bool unwind_load_fallback() noexcept { return unwind_detail::libunwind_load(); }

void unwind_modules_changed() noexcept {
  unwind_detail::bump_memo_generation();
  unwind_detail::rule_cache().clear();
  unwind_detail::libunwind_flush();
}

}  // namespace memloupe::recorder
