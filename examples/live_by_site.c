/* live_by_site: a live-size-by-site table built from memloupe's callbacks
 * alone (include/memloupe/memloupe.h), no trace reading.
 *
 *   LD_PRELOAD=libmemloupe_preload.so MEMLOUPE_OUTPUT=/tmp/t.trace ./live_by_site
 *
 * Each sampled block is tracked: on_track files it under its allocation site
 * (the innermost return address) and returns a record of its own, which
 * on_untrack gets back when the block dies and takes off the site's total. A
 * block stands for its size in --all mode (MEMLOUPE_MODE=all: every block is
 * "sampled" once) and for n_samples x MEMLOUPE_EVERY bytes when sampling: the
 * statistical estimate. Nothing here allocates through malloc: the tables are
 * static (allocations inside the callbacks would not be recorded anyway). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <memloupe/memloupe.h>

#define MAX_SITES 256
#define MAX_BLOCKS 65536

struct site {
  uint64_t address; /* innermost return address; 0: free slot */
  double live_bytes;
  uint64_t live_blocks;
};
struct block {
  struct site* site;
  double bytes;
  struct block* next_free;
};

static struct site sites[MAX_SITES];
static struct block blocks[MAX_BLOCKS];
static struct block* free_blocks;
static size_t blocks_used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static double bytes_per_sample; /* 0: every block counts its size (--all) */
static size_t deepest;

static struct site* site_of(uint64_t address) {
  for (size_t i = (address >> 4) % MAX_SITES, n = 0; n < MAX_SITES; ++n, i = (i + 1) % MAX_SITES) {
    if (sites[i].address == address) return &sites[i];
    if (sites[i].address == 0) {
      sites[i].address = address;
      return &sites[i];
    }
  }
  return NULL;
}

static void* on_track(const memloupe_sample* s, void* user) {
  (void)user;
  if (s->depth == 0) return NULL;
  pthread_mutex_lock(&lock);
  struct block* b = free_blocks;
  if (b) free_blocks = b->next_free;
  else if (blocks_used < MAX_BLOCKS) b = &blocks[blocks_used++];
  struct site* site = b ? site_of(s->backtrace[0]) : NULL;
  if (site) {
    b->site = site;
    b->bytes = bytes_per_sample > 0 ? s->n_samples * bytes_per_sample : (double)s->size;
    site->live_bytes += b->bytes;
    site->live_blocks += 1;
    if (s->depth > deepest) deepest = s->depth;
  } else if (b) {
    b->next_free = free_blocks;
    free_blocks = b;
    b = NULL;
  }
  pthread_mutex_unlock(&lock);
  return b; /* NULL: not tracked */
}

static void on_untrack(uint64_t id, void* address, void* tracker, void* user) {
  (void)id, (void)address, (void)user;
  struct block* b = tracker;
  pthread_mutex_lock(&lock);
  b->site->live_bytes -= b->bytes;
  b->site->live_blocks -= 1;
  b->next_free = free_blocks;
  free_blocks = b;
  pthread_mutex_unlock(&lock);
}

/* The program's own work: three sites with known live sizes at the end. */
static void* volatile keep[2000];
__attribute__((noinline)) static void* site_small(void) { return malloc(1000); }
__attribute__((noinline)) static void* site_large(void) { return malloc(50000); }
__attribute__((noinline)) static void* site_temporary(void) { return malloc(64); }

static void work(void) {
  for (int i = 0; i < 100; ++i) keep[i] = site_small();
  for (int i = 0; i < 40; ++i) free(keep[i]);
  for (int i = 0; i < 10; ++i) keep[200 + i] = site_large();
  for (int i = 0; i < 1000; ++i) free(site_temporary());
}

static void print_table(void) {
  printf("%14s  %8s  site\n", "live bytes", "blocks");
  for (size_t i = 0; i < MAX_SITES; ++i) {
    const struct site* s = &sites[i];
    if (s->address == 0 || s->live_blocks == 0) continue;
    Dl_info info;
    const char* where = dladdr((void*)(uintptr_t)(s->address - 1), &info) && info.dli_sname ? info.dli_sname : "?";
    printf("%14.0f  %8llu  %#llx %s\n", s->live_bytes, (unsigned long long)s->live_blocks,
           (unsigned long long)s->address, where);
  }
  printf("deepest backtrace: %zu frames\n", deepest);
}

int main(void) {
  if (!memloupe_set_trackers || memloupe_set_trackers(on_track, on_untrack, NULL) != 0) {
    fprintf(stderr, "live_by_site: run me under memloupe (LD_PRELOAD and MEMLOUPE_OUTPUT)\n");
    return 2;
  }
  const char* mode = getenv("MEMLOUPE_MODE");
  const char* every = getenv("MEMLOUPE_EVERY");
  if (!mode || strcmp(mode, "all") != 0) bytes_per_sample = every ? atof(every) : 512 * 1024;
  /* Short backtraces are enough to tell the sites apart. */
  if (memloupe_set_depth) memloupe_set_depth(4);
  work();
  memloupe_set_trackers(NULL, NULL, NULL);
  print_table();
  return 0;
}
