// The interposed allocation functions: one line each, in format/funcs.h order.
// Everything they share is in hook_paths.h.
//
// operator new does not forward to libstdc++'s operator new (which would call
// our malloc and count the block twice): it calls the real malloc itself and
// hands over to libstdc++'s only when that fails, for the new-handler loop and
// std::bad_alloc. Every operator delete is the real free, as in libstdc++.
#include <errno.h>

#include <cstddef>
#include <new>

#include "recorder/hook_paths.h"

#define MEMLOUPE_HOOK extern "C" __attribute__((visibility("default")))
#define MEMLOUPE_CXX_HOOK __attribute__((visibility("default")))

using namespace memloupe::recorder;

namespace {

constexpr size_t kPage = 4096;

uint64_t product_or_overflow(size_t a, size_t b, bool& overflow) noexcept {
  size_t n;
  overflow = __builtin_mul_overflow(a, b, &n);
  return overflow ? ~uint64_t{0} : n;
}

// operator new(0) must return a unique pointer, which it gets by asking for 0
// bytes: malloc(0) does return one from glibc (a minimum-size chunk, as for
// malloc(1)), jemalloc, tcmalloc and musl. An allocator that answers null is
// asked for 1 byte here, on the failure path, so the fast path has no test.
[[gnu::cold]] void* zero_size_retry() noexcept { return g_real.malloc(1); }

// After a failed allocation: the C++ runtime's operator new runs the
// new-handler loop and throws std::bad_alloc (the nothrow forms return null).
// Without a C++ runtime in the process nobody calls these hooks.
[[gnu::cold, gnu::noinline]] void* new_failed(size_t size) {
  if (size == 0)
    if (void* p = zero_size_retry()) return p;
  return g_real.new_throw ? g_real.new_throw(size) : nullptr;
}
[[gnu::cold, gnu::noinline]] void* new_nothrow_failed(size_t size, const std::nothrow_t& nt) noexcept {
  if (size == 0)
    if (void* p = zero_size_retry()) return p;
  return g_real.new_nothrow ? g_real.new_nothrow(size, nt) : nullptr;
}
inline void* new_or_handler(void* p, size_t size) {
  if (p != nullptr) [[likely]] return p;
  return new_failed(size);
}
inline void* new_or_null(void* p, size_t size, const std::nothrow_t& nt) noexcept {
  if (p != nullptr) [[likely]] return p;
  return new_nothrow_failed(size, nt);
}
inline void* new_aligned_or_handler(void* p, size_t size, std::align_val_t al) {
  if (p != nullptr) [[likely]] return p;
  return g_real.new_aligned_throw ? g_real.new_aligned_throw(size, al) : nullptr;
}
inline void* new_aligned_or_null(void* p, size_t size, std::align_val_t al,
                                 const std::nothrow_t& nt) noexcept {
  if (p != nullptr) [[likely]] return p;
  return g_real.new_aligned_nothrow ? g_real.new_aligned_nothrow(size, al, nt) : nullptr;
}

// operator new(size, align): the real allocator's aligned allocation.
inline void* aligned_block(size_t size, std::align_val_t al) noexcept {
  size_t align = static_cast<size_t>(al);
  if (align < sizeof(void*)) align = sizeof(void*);
  void* p = nullptr;
  return g_real.posix_memalign(&p, align, size ? size : 1) == 0 ? p : nullptr;
}

}  // namespace

// ---- C allocation functions -------------------------------------------------

MEMLOUPE_HOOK void* malloc(size_t n) {
  return allocate<Func::Malloc>(n, 0, [n] { return g_real.malloc(n); });
}

MEMLOUPE_HOOK void* calloc(size_t count, size_t size) {
  bool overflow;
  const uint64_t n = product_or_overflow(count, size, overflow);
  if (overflow) {
    errno = ENOMEM;
    return nullptr;
  }
  return allocate<Func::Calloc>(n, 0, [=] { return g_real.calloc(count, size); });
}

MEMLOUPE_HOOK void* realloc(void* p, size_t n) {
  return reallocate<Func::Realloc>(p, n, [=] { return g_real.realloc(p, n); });
}

// glibc's reallocarray calls realloc through the PLT, which would count (and
// maybe sample) the call twice: the overflow check is done here instead.
MEMLOUPE_HOOK void* reallocarray(void* p, size_t count, size_t size) {
  bool overflow;
  const uint64_t n = product_or_overflow(count, size, overflow);
  if (overflow) {
    errno = ENOMEM;
    return nullptr;
  }
  return reallocate<Func::Reallocarray>(p, n, [=] { return g_real.realloc(p, n); });
}

MEMLOUPE_HOOK int posix_memalign(void** out, size_t align, size_t n) {
  int err = 0;
  void* p = allocate<Func::PosixMemalign>(
      n, static_cast<uint32_t>(align), [&]() -> void* {
        void* q = nullptr;
        err = g_real.posix_memalign ? g_real.posix_memalign(&q, align, n) : ENOMEM;
        return q;
      });
  if (err == 0) *out = p;
  return err;
}

MEMLOUPE_HOOK void* aligned_alloc(size_t align, size_t n) {
  return allocate<Func::AlignedAlloc>(n, static_cast<uint32_t>(align), [=] { return g_real.aligned_alloc(align, n); });
}

MEMLOUPE_HOOK void* memalign(size_t align, size_t n) {
  return allocate<Func::Memalign>(n, static_cast<uint32_t>(align), [=] { return g_real.memalign(align, n); });
}

MEMLOUPE_HOOK void* valloc(size_t n) {
  return allocate<Func::Valloc>(n, kPage, [=] { return g_real.valloc(n); });
}

MEMLOUPE_HOOK void* pvalloc(size_t n) {
  return allocate<Func::Pvalloc>(n, kPage, [=] { return g_real.pvalloc(n); });
}

MEMLOUPE_HOOK void free(void* p) { release<Func::Free>(p); }

MEMLOUPE_HOOK size_t malloc_usable_size(void* p) {
  if (bootstrap::owns(p)) return bootstrap::usable_size(p);
  return g_real.malloc_usable_size ? g_real.malloc_usable_size(p) : 0;
}

// ---- C++ operator new ---------------------------------------------------------

MEMLOUPE_CXX_HOOK void* operator new(size_t n) {
  void* p = allocate<Func::New>(n, 0, [n] { return g_real.malloc(n); });
  return new_or_handler(p, n);
}

MEMLOUPE_CXX_HOOK void* operator new(size_t n, const std::nothrow_t& nt) noexcept {
  void* p = allocate<Func::NewNothrow>(n, 0, [n] { return g_real.malloc(n); });
  return new_or_null(p, n, nt);
}

MEMLOUPE_CXX_HOOK void* operator new(size_t n, std::align_val_t al) {
  void* p = allocate<Func::NewAligned>(n, static_cast<uint32_t>(al), [=] { return aligned_block(n, al); });
  return new_aligned_or_handler(p, n, al);
}

MEMLOUPE_CXX_HOOK void* operator new(size_t n, std::align_val_t al, const std::nothrow_t& nt) noexcept {
  void* p = allocate<Func::NewAlignedNothrow>(n, static_cast<uint32_t>(al), [=] { return aligned_block(n, al); });
  return new_aligned_or_null(p, n, al, nt);
}

MEMLOUPE_CXX_HOOK void* operator new[](size_t n) {
  void* p = allocate<Func::NewArray>(n, 0, [n] { return g_real.malloc(n); });
  return new_or_handler(p, n);
}

MEMLOUPE_CXX_HOOK void* operator new[](size_t n, const std::nothrow_t& nt) noexcept {
  void* p = allocate<Func::NewArrayNothrow>(n, 0, [n] { return g_real.malloc(n); });
  return new_or_null(p, n, nt);
}

MEMLOUPE_CXX_HOOK void* operator new[](size_t n, std::align_val_t al) {
  void* p = allocate<Func::NewArrayAligned>(n, static_cast<uint32_t>(al), [=] { return aligned_block(n, al); });
  return new_aligned_or_handler(p, n, al);
}

MEMLOUPE_CXX_HOOK void* operator new[](size_t n, std::align_val_t al, const std::nothrow_t& nt) noexcept {
  void* p = allocate<Func::NewArrayAlignedNothrow>(n, static_cast<uint32_t>(al),
                                                   [=] { return aligned_block(n, al); });
  return new_aligned_or_null(p, n, al, nt);
}

// ---- C++ operator delete ------------------------------------------------------

MEMLOUPE_CXX_HOOK void operator delete(void* p) noexcept { release<Func::Delete>(p); }
MEMLOUPE_CXX_HOOK void operator delete(void* p, size_t) noexcept { release<Func::DeleteSized>(p); }
MEMLOUPE_CXX_HOOK void operator delete(void* p, std::align_val_t) noexcept {
  release<Func::DeleteAligned>(p);
}
MEMLOUPE_CXX_HOOK void operator delete(void* p, size_t, std::align_val_t) noexcept {
  release<Func::DeleteSizedAligned>(p);
}
MEMLOUPE_CXX_HOOK void operator delete(void* p, const std::nothrow_t&) noexcept {
  release<Func::DeleteNothrow>(p);
}
MEMLOUPE_CXX_HOOK void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release<Func::DeleteAlignedNothrow>(p);
}
MEMLOUPE_CXX_HOOK void operator delete[](void* p) noexcept { release<Func::DeleteArray>(p); }
MEMLOUPE_CXX_HOOK void operator delete[](void* p, size_t) noexcept {
  release<Func::DeleteArraySized>(p);
}
MEMLOUPE_CXX_HOOK void operator delete[](void* p, std::align_val_t) noexcept {
  release<Func::DeleteArrayAligned>(p);
}
MEMLOUPE_CXX_HOOK void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  release<Func::DeleteArraySizedAligned>(p);
}
MEMLOUPE_CXX_HOOK void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release<Func::DeleteArrayNothrow>(p);
}
MEMLOUPE_CXX_HOOK void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release<Func::DeleteArrayAlignedNothrow>(p);
}
