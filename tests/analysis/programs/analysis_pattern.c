// A deterministic allocation pattern with known answers, for the analysis
// commands' end-to-end tests (tests/analysis/cli_test.cc has the arithmetic).
//
//   phase_temporaries  site_temp    64 B × 20000, each freed at once by its thread
//   phase_pages        site_page  4096 B × PAGES (argv[1], default 3000); the odd
//                                  ones are never freed
//   worker thread      site_worker 1000 B × 2000, never freed (thread "worker")
//   phase_big          site_big    256 KiB × 40, all freed after the peak
//
// The peak is reached by the last site_big allocation; then the big blocks and
// the even pages are freed, and the program exits.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define N_TEMP 20000
#define TEMP_SIZE 64
#define MAX_PAGES 10000
#define PAGE_SIZE 4096
#define N_WORKER 2000
#define WORKER_SIZE 1000
#define N_BIG 40
#define BIG_SIZE (256 * 1024)

static void* pages[MAX_PAGES];
static void* bigs[N_BIG];
static void* volatile sink;

__attribute__((noinline)) static void* site_temp(void) { return malloc(TEMP_SIZE); }
__attribute__((noinline)) static void* site_page(void) { return malloc(PAGE_SIZE); }
__attribute__((noinline)) static void* site_worker(void) { return malloc(WORKER_SIZE); }
__attribute__((noinline)) static void* site_big(void) { return malloc(BIG_SIZE); }

__attribute__((noinline)) static void phase_temporaries(void) {
  for (int i = 0; i < N_TEMP; ++i) {
    void* p = site_temp();
    memset(p, i, TEMP_SIZE);
    sink = p;
    free(p);
  }
}

__attribute__((noinline)) static void phase_pages(int n) {
  for (int i = 0; i < n; ++i) {
    pages[i] = site_page();
    memset(pages[i], 1, 64);
  }
}

static void* worker(void* arg) {
  (void)arg;
  for (int i = 0; i < N_WORKER; ++i) sink = site_worker();
  return NULL;
}

__attribute__((noinline)) static void phase_worker(void) {
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) exit(3);
  pthread_setname_np(t, "worker");
  pthread_join(t, NULL);
}

__attribute__((noinline)) static void phase_big(void) {
  for (int i = 0; i < N_BIG; ++i) {
    bigs[i] = site_big();
    memset(bigs[i], 2, 4096);
  }
}

int main(int argc, char** argv) {
  int n_pages = argc > 1 ? atoi(argv[1]) : 3000;
  if (n_pages < 0 || n_pages > MAX_PAGES) return 2;
  phase_temporaries();
  phase_pages(n_pages);
  phase_worker();
  phase_big();
  for (int i = 0; i < N_BIG; ++i) free(bigs[i]);
  for (int i = 0; i < n_pages; i += 2) free(pages[i]);
  return 0;
}
