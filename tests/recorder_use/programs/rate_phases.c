/* Two phases with different sampling rates (memloupe_set_rate): phase 1 at the
 * run's rate allocates only from phase_one_site, phase 2 at a 256x denser rate
 * only from phase_two_site. Every block is kept until exit, so the bytes per
 * site are known exactly: argv[1] blocks of argv[2] bytes per phase. With
 * argv[3] == "thread", phase 2 runs on a second thread started before the
 * change (its first gap was drawn at the old rate: the change waits for that draw,
 * which a loaded machine could otherwise schedule after it). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memloupe/memloupe.h"

static long g_blocks;
static size_t g_size;
static void** g_kept;
static long g_kept_n;
static pthread_barrier_t g_registered, g_changed;

/* Different bodies, so that the compiler does not fold them into one function. */
__attribute__((noinline)) static void* phase_one_site(size_t n) {
  char* p = malloc(n);
  p[0] = 1;
  return p;
}
__attribute__((noinline)) static void* phase_two_site(size_t n) {
  char* p = malloc(n);
  p[0] = 2;
  return p;
}

static void phase_two(void) {
  for (long i = 0; i < g_blocks; ++i) {
    void* p = phase_two_site(g_size);
    g_kept[g_kept_n++] = p;
  }
}

static void* second_thread(void* arg) {
  (void)arg;
  free(malloc(16)); /* registers this thread and draws its first gap at the old rate */
  pthread_barrier_wait(&g_registered);
  pthread_barrier_wait(&g_changed);
  phase_two();
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  g_blocks = atol(argv[1]);
  g_size = (size_t)atol(argv[2]);
  const int threaded = argc > 3 && strcmp(argv[3], "thread") == 0;
  g_kept = calloc((size_t)(2 * g_blocks), sizeof(void*));
  pthread_t t;
  pthread_barrier_init(&g_registered, NULL, 2);
  pthread_barrier_init(&g_changed, NULL, 2);
  if (threaded) pthread_create(&t, NULL, second_thread, NULL);
  for (long i = 0; i < g_blocks; ++i) {
    void* p = phase_one_site(g_size);
    g_kept[g_kept_n++] = p;
  }
  if (threaded) pthread_barrier_wait(&g_registered);
  if (!memloupe_set_rate || memloupe_set_rate(1.0 / 4096) != 0) return 3;
  if (memloupe_set_depth && memloupe_set_depth(32) != 0) return 4;
  if (threaded) {
    pthread_barrier_wait(&g_changed);
    pthread_join(t, NULL);
  } else {
    phase_two();
  }
  printf("kept %ld blocks\n", g_kept_n);
  return 0;
}
