// The functions the hooks forward to: the next definitions in the lookup order
// (dlsym(RTLD_NEXT)), so an allocator preloaded after us or linked into the
// program (jemalloc, tcmalloc) keeps serving the program.
//
// Bootstrap: dlsym itself calls calloc before any of these are known. Such calls
// (and anything else that arrives while they are unresolved) are served from a
// static pool; free() of pool memory is recognised and ignored.
#pragma once

#include <spawn.h>

#include <cstddef>
#include <cstdint>
#include <new>

namespace memloupe::recorder {

struct RealFuncs {
  void* (*malloc)(size_t) = nullptr;
  void (*free)(void*) = nullptr;
  void* (*calloc)(size_t, size_t) = nullptr;
  void* (*realloc)(void*, size_t) = nullptr;
  int (*posix_memalign)(void**, size_t, size_t) = nullptr;
  void* (*aligned_alloc)(size_t, size_t) = nullptr;
  void* (*memalign)(size_t, size_t) = nullptr;
  void* (*valloc)(size_t) = nullptr;
  void* (*pvalloc)(size_t) = nullptr;
  size_t (*malloc_usable_size)(void*) = nullptr;
  // libstdc++'s operator new, called only after malloc failed: it runs the
  // new-handler loop and throws std::bad_alloc (or returns null for nothrow).
  void* (*new_throw)(size_t) = nullptr;
  void* (*new_nothrow)(size_t, const std::nothrow_t&) = nullptr;
  void* (*new_aligned_throw)(size_t, std::align_val_t) = nullptr;
  void* (*new_aligned_nothrow)(size_t, std::align_val_t, const std::nothrow_t&) = nullptr;
  // Not allocation functions, hooked to end or name things in the trace.
  int (*execve)(const char*, char* const*, char* const*) = nullptr;
  int (*execvpe)(const char*, char* const*, char* const*) = nullptr;
  int (*fexecve)(int, char* const*, char* const*) = nullptr;
  int (*execveat)(int, const char*, char* const*, char* const*, int) = nullptr;
  int (*posix_spawn)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                     char* const*, char* const*) = nullptr;
  int (*posix_spawnp)(pid_t*, const char*, const posix_spawn_file_actions_t*, const posix_spawnattr_t*,
                      char* const*, char* const*) = nullptr;
  void (*exit_now)(int) = nullptr;        // _exit
  void (*exit_now_c99)(int) = nullptr;    // _Exit
  void (*abort)() = nullptr;
  int (*pthread_setname_np)(unsigned long, const char*) = nullptr;
  // Mapped memory (map_hooks.cc).
  void* (*mmap)(void*, size_t, int, int, int, long) = nullptr;
  int (*munmap)(void*, size_t) = nullptr;
  void* (*mremap)(void*, size_t, size_t, int, ...) = nullptr;
  void* (*sbrk)(intptr_t) = nullptr;
  int (*brk)(void*) = nullptr;
};

extern constinit RealFuncs g_real __attribute__((visibility("hidden")));

// Resolves g_real. Idempotent; the first call must run with the calling thread's
// hooks parked (dlsym allocates).
void resolve_real_funcs() noexcept;
bool real_funcs_resolved() noexcept;

// Attach (docs/ATTACH.md): a library dlopen'ed into a running process sits after
// the program in no lookup order, so RTLD_NEXT would skip an allocator the
// program links or preloads (jemalloc) and find libc's. Re-resolves the
// allocation functions through the global scope (the program's own definitions),
// keeping the RTLD_NEXT result where that scope leads back to our own hooks (the
// process was started with this library preloaded).
void resolve_real_funcs_for_attach() noexcept;

// The bootstrap pool: 64 KiB, bump-allocated, never reused.
namespace bootstrap {
void* allocate(size_t size, size_t alignment) noexcept;  // zeroed; nullptr when exhausted
inline constexpr size_t kPoolBytes = 64 * 1024;
extern unsigned char g_pool[kPoolBytes];
// Inline: every free asks.
inline bool owns(const void* p) noexcept {
  return reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(g_pool) < kPoolBytes;
}
size_t usable_size(const void* p) noexcept;  // for a pointer it owns
}  // namespace bootstrap

}  // namespace memloupe::recorder
