// Mapped memory: anonymous mmap / mremap / munmap and the program break
// (sbrk / brk), recorded as their own allocation functions (format/funcs.h:
// func_maps) through the same sampling and slow paths as malloc — sampled by
// bytes, every call in --all mode (docs/RECORDER.md, "Mapped memory").
//
// What is recorded, and why:
//  - Anonymous mappings only: a file mapping is not memory the program
//    allocated (its pages are the page cache's).
//  - Not the allocator's own mappings, which would count its blocks twice (a
//    large malloc is one mmap inside the allocator). glibc's malloc calls its
//    internal mmap/sbrk, never through the PLT, so these hooks do not see it; an
//    allocator preloaded or linked in (jemalloc, tcmalloc, mimalloc) calls mmap
//    through the PLT, so a call whose return address lies in the object that
//    provides the real malloc is passed through unrecorded. The range is found
//    in the library's constructor (dl_iterate_phdr is not safe inside a hook);
//    calls before it pass through.
//  - Not the recorder's own: it maps its memory with raw system calls, and
//    anything it calls through the PLT (libunwind, dlopen) runs with the
//    thread's hooks parked, where these pass through like every hook.
//  - munmap: the range is compared by its start. Unmapping from the start of a
//    recorded mapping ends that mapping's block, whatever the length (a partial
//    unmap at the start ends the record: the tail left mapped is no longer
//    counted); an unmap that starts inside a mapping (its tail, a hole) ends
//    nothing, so the mapping stays counted in full until its start is unmapped.
//    MAP_FIXED over part of a recorded mapping likewise ends nothing. Exact
//    page accounting would need a range table on every munmap; the common
//    users (Python's arenas, big buffers) map and unmap whole regions.
//  - mremap is a realloc of the mapping (one linked event when recorded).
//  - The program break is one block at the initial break, resized by every
//    sbrk/brk that moves it (an Sbrk realloc event), ended when it returns to
//    the initial break.
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "recorder/hook_paths.h"
#include "recorder/map_hooks.h"
#include "recorder/modules.h"

#define MEMLOUPE_HOOK extern "C" __attribute__((visibility("default")))

using namespace memloupe::recorder;

namespace {

// The object providing the real malloc: [lo, hi), valid once `known`.
std::atomic<bool> g_allocator_known{false};
uint64_t g_allocator_lo = 0, g_allocator_hi = 0;

// Whether a call made from `caller` may be recorded.
bool recordable_caller(const void* caller) noexcept {
  if (!g_allocator_known.load(std::memory_order_acquire)) return false;
  const auto a = reinterpret_cast<uint64_t>(caller);
  return a < g_allocator_lo || a >= g_allocator_hi;
}

long raw_result(long r) noexcept {
  if (r < 0 && r > -4096) {
    errno = static_cast<int>(-r);
    return -1;
  }
  return r;
}

void* real_mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) noexcept {
  if (g_real.mmap) return g_real.mmap(addr, len, prot, flags, fd, off);
  return reinterpret_cast<void*>(raw_result(::syscall(SYS_mmap, addr, len, prot, flags, fd, off)));
}
int real_munmap(void* addr, size_t len) noexcept {
  if (g_real.munmap) return g_real.munmap(addr, len);
  return static_cast<int>(raw_result(::syscall(SYS_munmap, addr, len)));
}
void* real_mremap(void* old, size_t old_size, size_t new_size, int flags, void* new_address) noexcept {
  if (g_real.mremap) return g_real.mremap(old, old_size, new_size, flags, new_address);
  return reinterpret_cast<void*>(raw_result(::syscall(SYS_mremap, old, old_size, new_size, flags, new_address)));
}

// The hooks' "real call" for the allocation templates: null for failure
// (MAP_FAILED is what the program gets).
inline void* or_null(void* p) noexcept { return p == MAP_FAILED ? nullptr : p; }
inline void* or_failed(void* p) noexcept { return p == nullptr ? MAP_FAILED : p; }

// The program break: the block at `base` (the break at the first sbrk/brk
// seen) has `size` bytes. The break is process-wide and programs that move it
// do so from one thread (it is not thread-safe in libc either).
struct Break {
  uintptr_t base = 0;
  uint64_t size = 0;
};
Break g_break;

// After the break moved from `before` to `after`: the block's event.
void break_moved(uintptr_t before, uintptr_t after) noexcept {
  if (g_break.base == 0) g_break.base = before;
  if (after == before) return;
  const uint64_t size = after > g_break.base ? after - g_break.base : 0;
  const auto block = reinterpret_cast<void*>(g_break.base);
  const uint64_t old_size = g_break.size;
  g_break.size = size;
  if (size == 0) {
    release<Func::Sbrk, /*RealFree=*/false>(block);
  } else if (old_size == 0) {
    (void)allocate<Func::Sbrk>(size, 0, [block] { return block; });
  } else {
    (void)reallocate<Func::Sbrk>(block, size, [block] { return block; });
  }
}

uintptr_t current_break() noexcept { return static_cast<uintptr_t>(::syscall(SYS_brk, 0)); }

}  // namespace

namespace memloupe::recorder {

void note_allocator_module() noexcept {
  if (!real_funcs_resolved()) return;
  const CodeRange r = module_range_of(reinterpret_cast<uint64_t>(g_real.malloc));
  g_allocator_lo = r.lo;
  g_allocator_hi = r.hi;
  g_allocator_known.store(true, std::memory_order_release);
}

}  // namespace memloupe::recorder

namespace {

// mmap and mmap64 (the same function on 64-bit; both names are exported).
[[gnu::always_inline]] inline void* map(const void* caller, void* addr, size_t len, int prot, int flags,
                                       int fd, off_t off) noexcept {
  // MAP_FIXED at address 0 may succeed with 0, which the templates read as failure.
  const bool fixed_at_zero = addr == nullptr && (flags & MAP_FIXED);
  if (!(flags & MAP_ANONYMOUS) || fixed_at_zero || !recordable_caller(caller))
    return real_mmap(addr, len, prot, flags, fd, off);
  return or_failed(allocate<Func::Mmap>(len, 0, [=] { return or_null(real_mmap(addr, len, prot, flags, fd, off)); }));
}

}  // namespace

MEMLOUPE_HOOK void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return map(__builtin_return_address(0), addr, len, prot, flags, fd, off);
}
MEMLOUPE_HOOK void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
  return map(__builtin_return_address(0), addr, len, prot, flags, fd, off);
}

MEMLOUPE_HOOK int munmap(void* addr, size_t len) {
  // Recorded before the real call: the address cannot be mapped again (and
  // recorded by another thread) before the event that ends its block.
  if (addr != nullptr && recordable_caller(__builtin_return_address(0))) release<Func::Munmap, /*RealFree=*/false>(addr);
  return real_munmap(addr, len);
}

MEMLOUPE_HOOK void* mremap(void* old, size_t old_size, size_t new_size, int flags, ...) {
  void* new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    new_address = va_arg(ap, void*);
    va_end(ap);
  }
  // new_size 0 fails (EINVAL) and leaves the mapping: the templates would read
  // a failed resize to 0 as a free.
  if (old == nullptr || new_size == 0 || !recordable_caller(__builtin_return_address(0)))
    return real_mremap(old, old_size, new_size, flags, new_address);
  return or_failed(reallocate<Func::Mremap>(
      old, new_size, [=] { return or_null(real_mremap(old, old_size, new_size, flags, new_address)); }));
}

MEMLOUPE_HOOK void* sbrk(intptr_t increment) {
  if (!g_real.sbrk) {
    errno = ENOMEM;
    return reinterpret_cast<void*>(-1);
  }
  if (increment == 0 || !recordable_caller(__builtin_return_address(0))) return g_real.sbrk(increment);
  void* before = g_real.sbrk(increment);
  if (before != reinterpret_cast<void*>(-1)) {
    const int saved = errno;
    break_moved(reinterpret_cast<uintptr_t>(before), reinterpret_cast<uintptr_t>(before) + increment);
    errno = saved;
  }
  return before;
}

MEMLOUPE_HOOK int brk(void* addr) {
  if (!g_real.brk) {
    errno = ENOMEM;
    return -1;
  }
  if (!recordable_caller(__builtin_return_address(0))) return g_real.brk(addr);
  const uintptr_t before = current_break();
  const int rc = g_real.brk(addr);
  if (rc == 0) {
    const int saved = errno;
    break_moved(before, reinterpret_cast<uintptr_t>(addr));
    errno = saved;
  }
  return rc;
}
