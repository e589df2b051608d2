// A 1 GiB heap over many threads that stays quick to build: THREADS threads
// (default 64) each allocate one large block of MIB/THREADS MiB (default 1024
// MiB in all; only its first word is written, the rest stays untouched zero
// pages) and a list of SMALL (default 2000) small blocks that the large block's
// first word points to. The global g_big holds the large blocks. All threads
// wait while the main thread takes a snapshot (the recorder takes another at
// exit); then it prints the heap's totals and a checksum of the lists, which
// the snapshot must not change.
#include <memloupe/memloupe.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

struct Small {  // 104 bytes: a size no other block of the process has
  Small* next;
  uint64_t value;
  char pad[88];
};
struct Big {
  Small* head;
};

constexpr size_t kMaxThreads = 256;
size_t g_big_bytes = 0, g_small = 0;
pthread_barrier_t g_built, g_snapshot_done;

}  // namespace

// The root the test looks for: every large block, and through them every list.
Big* g_big[kMaxThreads];

namespace {

void* worker(void* arg) {
  const auto index = reinterpret_cast<uintptr_t>(arg);
  auto* big = static_cast<Big*>(std::malloc(g_big_bytes));
  big->head = nullptr;
  for (size_t i = 0; i < g_small; ++i) {
    auto* s = static_cast<Small*>(std::malloc(sizeof(Small)));
    s->next = big->head;
    s->value = index * 1'000'003 + i;
    big->head = s;
  }
  g_big[index] = big;
  pthread_barrier_wait(&g_built);
  pthread_barrier_wait(&g_snapshot_done);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  g_small = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 2000;
  if (threads == 0 || threads > kMaxThreads) return 2;
  g_big_bytes = mib * 1024 * 1024 / threads;
  pthread_barrier_init(&g_built, nullptr, static_cast<unsigned>(threads + 1));
  pthread_barrier_init(&g_snapshot_done, nullptr, static_cast<unsigned>(threads + 1));
  pthread_t ids[kMaxThreads];
  for (size_t t = 0; t < threads; ++t)
    pthread_create(&ids[t], nullptr, worker, reinterpret_cast<void*>(static_cast<uintptr_t>(t)));
  pthread_barrier_wait(&g_built);
  const int taken = memloupe_snapshot ? memloupe_snapshot("all built") : 0;
  pthread_barrier_wait(&g_snapshot_done);
  for (size_t t = 0; t < threads; ++t) pthread_join(ids[t], nullptr);
  uint64_t sum = 0, count = 0;
  for (size_t t = 0; t < threads; ++t)
    for (const Small* s = g_big[t]->head; s != nullptr; s = s->next) sum += s->value, ++count;
  std::printf("%zu threads, %zu MiB in %zu blocks, %llu small blocks, checksum %llu, snapshot %s\n", threads,
              g_big_bytes * threads >> 20, threads, static_cast<unsigned long long>(count),
              static_cast<unsigned long long>(sum), taken == 0 ? "ok" : "refused");
  return 0;
}
