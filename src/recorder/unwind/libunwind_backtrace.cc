#include "recorder/unwind/libunwind_backtrace.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <algorithm>
#include <atomic>

namespace memloupe::recorder::unwind_detail {
namespace {

// unw_backtrace's array starts in the function that called it (ours); our callers'
// addresses start one further.
constexpr size_t kOwnFrames = 1;
// Up to this many addresses go through unw_backtrace (libunwind's cached fast trace)
// with a stack buffer; deeper requests step frame by frame straight into `out`, which
// keeps the stack use small for threads with little stack.
constexpr size_t kBuffered = 256;

void set_policy_once() noexcept {
  // Per-thread caching: libunwind's shared cache takes a lock that a signal handler
  // interrupting the same thread could deadlock on. Racing first callers set the same
  // policy twice, which is harmless.
  static constinit std::atomic<bool> done{false};
  if (done.load(std::memory_order_acquire)) return;
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  done.store(true, std::memory_order_release);
}

__attribute__((noinline)) size_t step_into(uint64_t* out, size_t max_frames, size_t first) noexcept {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return 0;
  // The context is taken here, one frame deeper than unw_backtrace's would be.
  size_t to_skip = first + 1, n = 0;
  do {
    unw_word_t ip = 0;
    if (unw_get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    if (to_skip > 0) {
      --to_skip;
    } else {
      out[n++] = ip;
    }
  } while (n < max_frames && unw_step(&cursor) > 0);
  return n;
}

}  // namespace

__attribute__((noinline)) size_t libunwind_backtrace(uint64_t* out, size_t max_frames,
                                                     size_t skip) noexcept {
  set_policy_once();
  const size_t first = skip + kOwnFrames;
  size_t count = 0;
  if (max_frames + first > kBuffered) {
    count = step_into(out, max_frames, first);
  } else {
    void* ips[kBuffered];
    const int n = unw_backtrace(ips, static_cast<int>(max_frames + first));
    if (n > 0 && static_cast<size_t>(n) > first) {
      count = std::min(static_cast<size_t>(n) - first, max_frames);
      for (size_t i = 0; i < count; ++i) out[i] = reinterpret_cast<uintptr_t>(ips[first + i]);
    }
  }
  // Keep this frame a real frame: a tail call would make libunwind see our caller's
  // frame as its own and shift every index by one.
  asm volatile("" ::: "memory");
  return count;
}

void libunwind_flush() noexcept { unw_flush_cache(unw_local_addr_space, 0, 0); }

}  // namespace memloupe::recorder::unwind_detail
