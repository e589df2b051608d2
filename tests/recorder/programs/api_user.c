// A program using memloupe's public C API through its weak declarations: it runs
// with or without the preload library.
#define _GNU_SOURCE
#include <memloupe/memloupe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void* volatile sink;

struct counts {
  unsigned long allocs, samples, tracked, freed, ids_matched;
  uint64_t tracked_ids[64];
};

static int on_alloc(const memloupe_sample* s, void* user) {
  struct counts* c = user;
  c->allocs++;
  c->samples += s->n_samples;
  sink = malloc(10);  // a callback may allocate; this one is not recorded
  free(sink);
  if (s->size != 77777 || strcmp(s->function, "malloc") != 0 || s->depth == 0) return 0;
  if (c->tracked < 64) c->tracked_ids[c->tracked] = s->id;
  c->tracked++;
  return 1;  // tell me when it dies
}

static void on_free(uint64_t id, void* address, void* user) {
  (void)address;
  struct counts* c = user;
  c->freed++;
  for (unsigned long i = 0; i < c->tracked && i < 64; ++i) c->ids_matched += c->tracked_ids[i] == id;
}

int main(void) {
  if (!memloupe_marker) {
    printf("no memloupe\n");
    return 0;
  }
  pthread_setname_np(pthread_self(), "api-main");
  static struct counts c;
  if (memloupe_set_callbacks(on_alloc, on_free, &c) != 0) {
    printf("not recording\n");
    return 0;
  }
  memloupe_marker("start");
  void* blocks[20];
  for (int i = 0; i < 20; ++i) blocks[i] = malloc(77777);
  for (int i = 0; i < 20; ++i) free(blocks[i]);
  const int stopped = memloupe_stop();
  for (int i = 0; i < 100; ++i) free(sink = malloc(1 << 20));  // not sampled while stopped
  const int started = memloupe_start();
  for (int i = 0; i < 1000; ++i) free(sink = malloc(300));
  memloupe_marker("end");
  const struct counts seen = c;
  memloupe_set_callbacks(NULL, NULL, NULL);
  // Without callbacks --all mode records through its staging ring again; a
  // pause there still records nothing, and a callback installed again sees
  // every call.
  memloupe_stop();
  for (int i = 0; i < 100; ++i) free(sink = malloc(2 << 20));  // not sampled while stopped
  memloupe_start();
  for (int i = 0; i < 100; ++i) free(sink = malloc(333));
  static struct counts again;
  memloupe_set_callbacks(on_alloc, NULL, &again);
  for (int i = 0; i < 100; ++i) free(sink = malloc(444));
  memloupe_set_callbacks(NULL, NULL, NULL);
  memloupe_flush();
  printf("stop %d start %d allocs %lu samples %lu tracked %lu freed %lu matched %lu again %lu\n", stopped,
         started, seen.allocs, seen.samples, seen.tracked, seen.freed, seen.ids_matched, again.allocs);
  return 0;
}
