// A library the unwinder tests dlopen: it recurses inside itself, then calls back
// into the test, so the stack has frames in a second module between test frames.
#include <cstdint>

extern "C" {

using testlib_callback = void (*)(void*);

__attribute__((noinline)) int testlib_recurse(int depth, testlib_callback cb, void* arg) {
  if (depth == 0) {
    cb(arg);
    return 0;
  }
  const int r = testlib_recurse(depth - 1, cb, arg) + 1;
  asm volatile("" ::: "memory");  // not a tail call
  return r;
}

}  // extern "C"
