/* An "allocator" for the replay tests that fails: it serves the first calls
   through glibc, then raises SIGSEGV, as a buggy allocator would; or, with
   MEMLOUPE_TEST_ALLOC_HANG set, stops for good, as a deadlocked one would. */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

extern void* __libc_malloc(size_t);
extern void* __libc_calloc(size_t, size_t);
extern void* __libc_realloc(void*, size_t);
extern void* __libc_memalign(size_t, size_t);
extern void __libc_free(void*);

static int calls;

static void count(void) {
  if (__atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED) <= 2000) return;
  if (getenv("MEMLOUPE_TEST_ALLOC_HANG") != NULL) {
    for (;;) pause();
  }
  raise(SIGSEGV);
}

void* malloc(size_t n) {
  count();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  count();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  count();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  count();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) { return memalign(a, n); }
int posix_memalign(void** out, size_t a, size_t n) {
  *out = memalign(a, n);
  return *out ? 0 : 12;
}
void free(void* p) { __libc_free(p); }
