/* For the attach tests: a block allocated before the attach and reallocated
 * after it.
 *   attach_realloc_target DIR
 * allocates a 100-byte block, prints "ready", waits for DIR/go, grows the
 * block to 5000 bytes at attach_site_grow, allocates one more block at
 * attach_site_fresh, prints "grown", waits for DIR/stop, exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) void* attach_site_grow(void* p, size_t n) {
  p = realloc(p, n);
  memset(p, 2, n);
  __asm__ volatile("" ::: "memory");
  return p;
}

__attribute__((noinline)) void* attach_site_fresh(size_t n) {
  void* p = malloc(n);
  memset(p, 3, n);
  __asm__ volatile("" ::: "memory");
  return p;
}

static void wait_for(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  const struct timespec pause = {0, 10 * 1000 * 1000};
  while (access(path, F_OK) != 0) nanosleep(&pause, NULL);
}

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* early = malloc(100);
  memset(early, 1, 100);
  printf("ready\n");
  fflush(stdout);
  wait_for(argv[1], "go");
  early = attach_site_grow(early, 5000);
  void* fresh = attach_site_fresh(300);
  printf("grown\n");
  fflush(stdout);
  wait_for(argv[1], "stop");
  free(fresh);
  free(early);
  return 0;
}
