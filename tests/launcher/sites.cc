// See sites.h. The empty asm statements keep each call from being a tail call
// (its return address must land in the caller) and each block alive.
#include "sites.h"

#include <new>

namespace memloupe_testprog {

[[gnu::noinline]] Capture leaf_allocate(std::size_t bytes) {
  Capture c;
  c.block = ::operator new(bytes);  // @leaf-call
  c.return_address = reinterpret_cast<uintptr_t>(__builtin_return_address(0));
  asm volatile("" : : "r"(c.block) : "memory");
  return c;
}

template <class T>
struct Builder {
  [[gnu::always_inline]] static inline Capture make(std::size_t n) {
    Capture c = leaf_allocate(n * sizeof(T));  // @inlined-call
    asm volatile("" : : "r"(c.block) : "memory");
    return c;
  }
};

[[gnu::noinline]] Capture build_widgets(std::size_t n) {
  Capture c = Builder<Widget>::make(n);  // @outer-call
  asm volatile("" : : "r"(c.block) : "memory");
  return c;
}

extern "C" [[gnu::noinline]] void c_allocate(std::size_t bytes, Capture* out) {
  *out = leaf_allocate(bytes);  // @c-call
  asm volatile("" : : "r"(out) : "memory");
}

}  // namespace memloupe_testprog
