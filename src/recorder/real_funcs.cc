#include "recorder/real_funcs.h"

#include <dlfcn.h>

#include <atomic>
#include <cstring>

namespace memloupe::recorder {

constinit RealFuncs g_real;

namespace {

std::atomic<bool> g_resolved{false};

template <class F>
void resolve(F*& slot, const char* name, const char* fallback = nullptr) noexcept {
  void* p = dlsym(RTLD_NEXT, name);
  // Without a next definition (unusual link orders) fall back to glibc's own
  // entry points, which exist precisely for interposers.
  if (p == nullptr && fallback != nullptr) p = dlsym(RTLD_DEFAULT, fallback);
  slot = reinterpret_cast<F*>(p);
}

// Whether `p` is defined in this library.
bool in_this_library(void* p) noexcept {
  Dl_info self{}, other{};
  return dladdr(reinterpret_cast<void*>(&resolve_real_funcs), &self) != 0 && dladdr(p, &other) != 0 &&
         self.dli_fbase == other.dli_fbase;
}

template <class F>
void resolve_global(F*& slot, const char* name) noexcept {
  void* p = dlsym(RTLD_DEFAULT, name);
  if (p != nullptr && !in_this_library(p)) slot = reinterpret_cast<F*>(p);
}

}  // namespace

void resolve_real_funcs_for_attach() noexcept {
  resolve_real_funcs();
  RealFuncs& r = g_real;
  resolve_global(r.malloc, "malloc");
  resolve_global(r.free, "free");
  resolve_global(r.calloc, "calloc");
  resolve_global(r.realloc, "realloc");
  resolve_global(r.posix_memalign, "posix_memalign");
  resolve_global(r.aligned_alloc, "aligned_alloc");
  resolve_global(r.memalign, "memalign");
  resolve_global(r.valloc, "valloc");
  resolve_global(r.pvalloc, "pvalloc");
  resolve_global(r.malloc_usable_size, "malloc_usable_size");
}

void resolve_real_funcs() noexcept {
  if (g_resolved.load(std::memory_order_acquire)) return;
  RealFuncs& r = g_real;
  resolve(r.malloc, "malloc", "__libc_malloc");
  resolve(r.free, "free", "__libc_free");
  resolve(r.calloc, "calloc", "__libc_calloc");
  resolve(r.realloc, "realloc", "__libc_realloc");
  resolve(r.posix_memalign, "posix_memalign");
  resolve(r.aligned_alloc, "aligned_alloc");
  resolve(r.memalign, "memalign", "__libc_memalign");
  resolve(r.valloc, "valloc", "__libc_valloc");
  resolve(r.pvalloc, "pvalloc", "__libc_pvalloc");
  resolve(r.malloc_usable_size, "malloc_usable_size");
  resolve(r.new_throw, "_Znwm");
  resolve(r.new_nothrow, "_ZnwmRKSt9nothrow_t");
  resolve(r.new_aligned_throw, "_ZnwmSt11align_val_t");
  resolve(r.new_aligned_nothrow, "_ZnwmSt11align_val_tRKSt9nothrow_t");
  resolve(r.execve, "execve");
  resolve(r.execvpe, "execvpe");
  resolve(r.fexecve, "fexecve");
  resolve(r.execveat, "execveat");
  resolve(r.posix_spawn, "posix_spawn");
  resolve(r.posix_spawnp, "posix_spawnp");
  resolve(r.exit_now, "_exit");
  resolve(r.exit_now_c99, "_Exit");
  resolve(r.abort, "abort");
  resolve(r.pthread_setname_np, "pthread_setname_np");
  resolve(r.mmap, "mmap");
  resolve(r.munmap, "munmap");
  resolve(r.mremap, "mremap");
  resolve(r.sbrk, "sbrk");
  resolve(r.brk, "brk");
  g_resolved.store(r.malloc && r.free && r.calloc && r.realloc, std::memory_order_release);
}

bool real_funcs_resolved() noexcept { return g_resolved.load(std::memory_order_acquire); }

namespace bootstrap {

alignas(4096) unsigned char g_pool[kPoolBytes];

namespace {

constexpr size_t kHeader = 16;  // the block's size, kept just before it
std::atomic<size_t> g_used{0};

}  // namespace

void* allocate(size_t size, size_t alignment) noexcept {
  if (alignment < kHeader) alignment = kHeader;
  if (size > kPoolBytes || (alignment & (alignment - 1)) != 0 || alignment > kPoolBytes) return nullptr;
  size_t used = g_used.load(std::memory_order_relaxed);
  for (;;) {
    const size_t start = (used + kHeader + alignment - 1) & ~(alignment - 1);
    const size_t end = start + size;
    if (end > kPoolBytes) return nullptr;
    if (g_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
      std::memcpy(g_pool + start - kHeader, &size, sizeof(size));
      return g_pool + start;  // zero: static storage, never handed out twice
    }
  }
}

size_t usable_size(const void* p) noexcept {
  size_t size;
  std::memcpy(&size, static_cast<const unsigned char*>(p) - kHeader, sizeof(size));
  return size;
}

}  // namespace bootstrap
}  // namespace memloupe::recorder
