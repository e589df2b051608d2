// Known allocation patterns for the recorder's end-to-end tests. Each mode prints
// what it did ("<function> <calls> <bytes>" lines) so the test compares the
// trace with the program's own accounting. Every mode prints through stdio once,
// so that stdio's buffer allocation is common to all modes (the tests subtract
// the "baseline" mode's totals to remove start-up allocations).
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

void* volatile sink;  // defeats malloc/free elision

static void report(const char* fn, unsigned long calls, unsigned long bytes) {
  printf("%s %lu %lu\n", fn, calls, bytes);
}

// ---- exact: every C allocation function a known number of times -------------
static void exact(void) {
  unsigned long bytes = 0;
  for (size_t i = 1; i <= 1000; ++i) free(sink = malloc(i)), bytes += i;
  report("malloc", 1000, bytes);

  bytes = 0;
  for (size_t i = 1; i <= 200; ++i) free(sink = calloc(i, 8)), bytes += i * 8;
  report("calloc", 200, bytes);

  void* p = NULL;
  bytes = 0;
  for (size_t i = 1; i <= 300; ++i) p = realloc(p, i * 16), bytes += i * 16;
  free(p);
  report("realloc", 300, bytes);

  p = NULL;
  bytes = 0;
  for (size_t i = 1; i <= 50; ++i) p = reallocarray(p, i, 24), bytes += i * 24;
  free(p);
  report("reallocarray", 50, bytes);

  for (int i = 0; i < 40; ++i) {
    void* q;
    if (posix_memalign(&q, 64, 100) == 0) free(q);
  }
  report("posix_memalign", 40, 40 * 100);
  for (int i = 0; i < 30; ++i) free(sink = aligned_alloc(128, 256));
  report("aligned_alloc", 30, 30 * 256);
  for (int i = 0; i < 20; ++i) free(sink = memalign(32, 50));
  report("memalign", 20, 20 * 50);
  for (int i = 0; i < 10; ++i) free(sink = valloc(5000));
  report("valloc", 10, 10 * 5000);
  for (int i = 0; i < 5; ++i) free(sink = pvalloc(3000));
  report("pvalloc", 5, 5 * 3000);
  report("free", 1000 + 200 + 1 + 1 + 40 + 30 + 20 + 10 + 5, 0);
}

// ---- sampled: two sites with known call chains --------------------------------
enum { kBigBlock = 256 * 1024, kBigCount = 4000, kSmallBlock = 64, kSmallCount = 400000 };

NOINLINE void* site_big(size_t n) { return malloc(n); }
NOINLINE void mid_big(int count) {
  for (int i = 0; i < count; ++i) free(sink = site_big(kBigBlock));
}
NOINLINE void outer_big(void) { mid_big(kBigCount); }

// Inlined into site_small: its frame exists only in the debug info.
static inline __attribute__((always_inline)) void* inlined_small(size_t n) { return malloc(n); }
NOINLINE void site_small(int count) {
  for (int i = 0; i < count; ++i) free(sink = inlined_small(kSmallBlock));
}

static void sampled(void) {
  outer_big();
  site_small(kSmallCount);
  report("big", kBigCount, (unsigned long)kBigCount * kBigBlock);
  report("small", kSmallCount, (unsigned long)kSmallCount * kSmallBlock);
}

// ---- zero: the corner cases of the C API --------------------------------------
static void zero(void) {
  void* z = malloc(0);
  printf("malloc0 %s\n", z ? "nonnull" : "null");
  free(z);
  free(NULL);
  void* p = malloc(10);
  void* r = realloc(p, 0);  // glibc: frees p, returns NULL
  printf("realloc0 %s\n", r ? "nonnull" : "null");
  free(r);
  void* q = realloc(NULL, 24);  // a malloc, through realloc
  printf("reallocnull %s\n", q ? "nonnull" : "null");
  free(q);
}

// ---- errno: allocation functions that succeed leave errno alone --------------
static void keeps_errno(void) {
  int kept = 0;
  for (int i = 0; i < 100; ++i) {
    errno = 1000 + i;
    void* p = malloc(64 + i);
    p = realloc(p, 4096 + i);
    free(p);
    kept += errno == 1000 + i;
  }
  printf("errno kept %d/100\n", kept);
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "baseline";
  if (strcmp(mode, "exact") == 0) exact();
  else if (strcmp(mode, "sampled") == 0) sampled();
  else if (strcmp(mode, "zero") == 0) zero();
  else if (strcmp(mode, "errno") == 0) keeps_errno();
  else if (strcmp(mode, "baseline") != 0) return 2;
  printf("%s done\n", mode);
  return 0;
}
