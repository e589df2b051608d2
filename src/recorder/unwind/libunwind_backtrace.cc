#include "recorder/unwind/libunwind_backtrace.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <algorithm>
#include <atomic>

namespace memloupe::recorder::unwind_detail {
namespace {

// unw_backtrace's array includes the frame it was called from; ours start one further.
constexpr size_t kOwnFrames = 1;
// Batch size for one unw_backtrace call; frames beyond it cost a second walk.
constexpr int kChunk = 256;

void set_policy_once() noexcept {
  // Per-thread caching: libunwind's shared cache takes a lock that a signal handler
  // interrupting the same thread could deadlock on. Racing first callers set the same
  // policy twice, which is harmless.
  static std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  done.store(true, std::memory_order_release);
}

}  // namespace

__attribute__((noinline)) size_t libunwind_backtrace(uint64_t* out, size_t max_frames,
                                                     size_t skip) noexcept {
  set_policy_once();
  void* ips[kChunk];
  const size_t want = std::min<size_t>(kChunk, max_frames + skip + kOwnFrames);
  const int n = unw_backtrace(ips, static_cast<int>(want));
  const size_t first = skip + kOwnFrames;
  if (n <= 0 || static_cast<size_t>(n) <= first) return 0;
  const size_t count = std::min(static_cast<size_t>(n) - first, max_frames);
  for (size_t i = 0; i < count; ++i) out[i] = reinterpret_cast<uintptr_t>(ips[first + i]);
  // Keep this frame a real frame: a tail call would make unw_backtrace see our caller's
  // frame as its own and shift every index by one.
  asm volatile("" ::: "memory");
  return count;
}

void libunwind_flush() noexcept { unw_flush_cache(unw_local_addr_space, 0, 0); }

}  // namespace memloupe::recorder::unwind_detail
