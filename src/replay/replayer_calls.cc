#include "replay/replayer_calls.h"

#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <new>

namespace memloupe::replay {
namespace {

using format::Func;

constexpr size_t kPage = 4096;

size_t posix_alignment(size_t a) { return a < sizeof(void*) ? sizeof(void*) : a; }

// Throwing operator new: a refusal is a std::bad_alloc here; the program got
// a block, so the replay counts the failure and goes on.
template <class Fn>
void* catching(Fn fn) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}

}  // namespace

void* call_alloc(Func f, size_t size, size_t alignment) {
  const auto al = std::align_val_t{alignment};
  switch (f) {
    case Func::Malloc: return std::malloc(size);
    case Func::Calloc: return std::calloc(1, size);
    // realloc(NULL, n) and reallocarray(NULL, ...): the recorded size is the product.
    case Func::Realloc:
    case Func::Reallocarray: return std::realloc(nullptr, size);
    case Func::PosixMemalign: {
      void* p = nullptr;
      return posix_memalign(&p, posix_alignment(alignment), size) == 0 ? p : nullptr;
    }
    case Func::AlignedAlloc: return aligned_alloc(alignment, size);
    case Func::Memalign: return memalign(alignment, size);
    case Func::Valloc: return valloc(size);
    // pvalloc is memalign(page, size rounded up to pages); jemalloc does not
    // export pvalloc, and glibc's would hand its block to another allocator's free.
    case Func::Pvalloc: return memalign(kPage, (size + kPage - 1) / kPage * kPage);
    case Func::New: return catching([&] { return ::operator new(size); });
    case Func::NewNothrow: return ::operator new(size, std::nothrow);
    case Func::NewAligned: return catching([&] { return ::operator new(size, al); });
    case Func::NewAlignedNothrow: return ::operator new(size, al, std::nothrow);
    case Func::NewArray: return catching([&] { return ::operator new[](size); });
    case Func::NewArrayNothrow: return ::operator new[](size, std::nothrow);
    case Func::NewArrayAligned: return catching([&] { return ::operator new[](size, al); });
    case Func::NewArrayAlignedNothrow: return ::operator new[](size, al, std::nothrow);
    default: return std::malloc(size);  // not an allocating function: prepare never emits it
  }
}

void call_free(Func f, void* p, size_t size, size_t alignment) {
  if (p == nullptr) return;  // the allocation was refused; the sized forms must not see it
  const auto al = std::align_val_t{alignment};
  switch (f) {
    case Func::Delete: ::operator delete(p); return;
    case Func::DeleteSized: ::operator delete(p, size); return;
    case Func::DeleteAligned: ::operator delete(p, al); return;
    case Func::DeleteSizedAligned: ::operator delete(p, size, al); return;
    case Func::DeleteNothrow: ::operator delete(p, std::nothrow); return;
    case Func::DeleteAlignedNothrow: ::operator delete(p, al, std::nothrow); return;
    case Func::DeleteArray: ::operator delete[](p); return;
    case Func::DeleteArraySized: ::operator delete[](p, size); return;
    case Func::DeleteArrayAligned: ::operator delete[](p, al); return;
    case Func::DeleteArraySizedAligned: ::operator delete[](p, size, al); return;
    case Func::DeleteArrayNothrow: ::operator delete[](p, std::nothrow); return;
    case Func::DeleteArrayAlignedNothrow: ::operator delete[](p, al, std::nothrow); return;
    // free, and realloc(p, 0) (which glibc turns into a free; docs/REPLAY.md).
    default: std::free(p); return;
  }
}

void* call_realloc(void* p, size_t size) { return std::realloc(p, size); }

void touch(void* p, size_t size) {
  if (p == nullptr || size == 0) return;
  auto* b = static_cast<volatile unsigned char*>(p);
  for (size_t i = 0; i < size; i += kPage) b[i] = 1;
  b[size - 1] = 1;
}

}  // namespace memloupe::replay
