#include "recorder/unwind/libunwind_backtrace.h"

#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>

#include <algorithm>
#include <atomic>

#ifndef MEMLOUPE_LIBUNWIND_SONAME
#error "MEMLOUPE_LIBUNWIND_SONAME must name the libunwind to dlopen (see CMakeLists.txt)"
#endif

namespace memloupe::recorder::unwind_detail {
namespace {

// libunwind's header maps each API name to its exported, per-architecture symbol
// (unw_init_local -> _ULx86_64_init_local); stringifying the macro gives that name.
#define MEMLOUPE_UNW_STR2(x) #x
#define MEMLOUPE_UNW_STR(x) MEMLOUPE_UNW_STR2(x)

// The functions used, resolved from the privately loaded library. Written once by
// libunwind_load() before `g_api` publishes them.
struct Api {
  decltype(&unw_tdep_getcontext) getcontext;  // what the unw_getcontext() macro calls
  decltype(&unw_init_local) init_local;
  decltype(&unw_get_reg) get_reg;
  decltype(&unw_step) step;
  decltype(&unw_backtrace) backtrace;
  decltype(&unw_set_caching_policy) set_caching_policy;
  decltype(&unw_flush_cache) flush_cache;
  unw_addr_space_t* local_addr_space;  // unw_local_addr_space is a variable
};
constinit Api g_api_storage{};
constinit std::atomic<const Api*> g_api{nullptr};
enum class LoadState : int { kUntried, kLoading, kDone };
constinit std::atomic<LoadState> g_load_state{LoadState::kUntried};

template <class T>
bool resolve(void* handle, const char* name, T& out) noexcept {
  out = reinterpret_cast<T>(dlsym(handle, name));
  return out != nullptr;
}

bool load_api(Api& a) noexcept {
  // RTLD_NOW: nothing is left to bind lazily later, inside a malloc hook.
  // RTLD_LOCAL: none of libunwind's symbols join the global scope.
  void* h = dlopen(MEMLOUPE_LIBUNWIND_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  const bool ok = resolve(h, MEMLOUPE_UNW_STR(unw_tdep_getcontext), a.getcontext) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_init_local), a.init_local) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_get_reg), a.get_reg) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_step), a.step) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_backtrace), a.backtrace) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_set_caching_policy), a.set_caching_policy) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_flush_cache), a.flush_cache) &&
                  resolve(h, MEMLOUPE_UNW_STR(unw_local_addr_space), a.local_addr_space);
  if (!ok) return false;  // the handle stays open: harmless, and dlclose would allocate too
  // Per-thread caching: libunwind's shared cache takes a lock that a signal handler
  // interrupting the same thread could deadlock on.
  a.set_caching_policy(*a.local_addr_space, UNW_CACHE_PER_THREAD);
  return true;
}

// unw_backtrace's array starts in the function that called it (ours); our callers'
// addresses start one further.
constexpr size_t kOwnFrames = 1;
// Up to this many addresses go through unw_backtrace (libunwind's cached fast trace)
// with a stack buffer; deeper requests step frame by frame straight into `out`, which
// keeps the stack use small for threads with little stack.
constexpr size_t kBuffered = 256;

__attribute__((noinline)) size_t step_into(const Api& a, uint64_t* out, size_t max_frames,
                                           size_t first) noexcept {
  unw_context_t context;
  unw_cursor_t cursor;
  if (a.getcontext(&context) != 0 || a.init_local(&cursor, &context) != 0) return 0;
  // The context is taken here, one frame deeper than unw_backtrace's would be.
  size_t to_skip = first + 1, n = 0;
  do {
    unw_word_t ip = 0;
    if (a.get_reg(&cursor, UNW_REG_IP, &ip) != 0 || ip == 0) break;
    if (to_skip > 0) {
      --to_skip;
    } else {
      out[n++] = ip;
    }
  } while (n < max_frames && a.step(&cursor) > 0);
  return n;
}

}  // namespace

bool libunwind_load() noexcept {
  LoadState expected = LoadState::kUntried;
  if (!g_load_state.compare_exchange_strong(expected, LoadState::kLoading, std::memory_order_acquire))
    return libunwind_loaded();  // loaded, failed, or being loaded by another thread
  if (load_api(g_api_storage)) g_api.store(&g_api_storage, std::memory_order_release);
  g_load_state.store(LoadState::kDone, std::memory_order_release);
  return libunwind_loaded();
}

bool libunwind_loaded() noexcept { return g_api.load(std::memory_order_acquire) != nullptr; }

__attribute__((noinline)) size_t libunwind_backtrace(uint64_t* out, size_t max_frames,
                                                     size_t skip) noexcept {
  const Api* a = g_api.load(std::memory_order_acquire);
  if (a == nullptr) return 0;
  const size_t first = skip + kOwnFrames;
  size_t count = 0;
  if (max_frames + first > kBuffered) {
    count = step_into(*a, out, max_frames, first);
  } else {
    void* ips[kBuffered];
    const int n = a->backtrace(ips, static_cast<int>(max_frames + first));
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

void libunwind_flush() noexcept {
  if (const Api* a = g_api.load(std::memory_order_acquire)) a->flush_cache(*a->local_addr_space, 0, 0);
}

}  // namespace memloupe::recorder::unwind_detail
