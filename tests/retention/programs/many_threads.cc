// Many threads and a big heap, for the heap snapshot's stop-the-world and scan:
// THREADS threads (default 64) build MIB MiB of heap between them (default
// 1024), then all wait while the main thread takes a snapshot (and the
// recorder takes another at exit). Prints the heap's totals and a checksum of
// its lists, which the snapshot must not change. The third argument picks the
// heap:
//   (none)           each thread a linked list of 64 KiB blocks, every word of
//                    which points at the list's head (the scan's usual case);
//   scattered        the same, the words pointing to many different earlier
//                    blocks of the thread (the worst case: no two neighbouring
//                    words hit the same block);
//   untouched SMALL  each thread one block of MIB/THREADS MiB whose pages stay
//                    untouched but for its first word, which heads a list of
//                    SMALL 104-byte blocks: a big heap that is quick to build.
// The global g_lists holds each thread's list (or big block).
#include <memloupe/memloupe.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBlock = 64 * 1024;
constexpr size_t kMaxThreads = 256;
struct Block {
  Block* next;
  uint64_t value;
};
struct Small {  // 104 bytes: a size no other block of the process has
  Small* next;
  uint64_t value;
  char pad[88];
};

size_t g_blocks_per_thread = 0, g_big_bytes = 0, g_small = 0;
bool g_scattered = false, g_untouched = false;
pthread_barrier_t g_built, g_snapshot_done;

}  // namespace

// Each thread's list head, or its big block (whose first word heads the list).
void* g_lists[kMaxThreads];

namespace {

void build_lists(uintptr_t index) {
  Block* head = nullptr;
  std::vector<Block*> mine;
  mine.reserve(g_blocks_per_thread);
  uint64_t x = index + 1;
  for (size_t i = 0; i < g_blocks_per_thread; ++i) {
    auto* b = static_cast<Block*>(std::malloc(kBlock));
    // Fill the block with pointers (to its list's head, or scattered over the
    // earlier blocks): every word is scanned and is an edge candidate.
    auto** words = reinterpret_cast<Block**>(b);
    for (size_t w = 0; w < kBlock / sizeof(Block*); ++w) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;  // xorshift64
      words[w] = g_scattered && !mine.empty() ? mine[x % mine.size()] : head;
    }
    mine.push_back(b);
    b->next = head;
    b->value = index * 1'000'003 + i;
    head = b;
  }
  g_lists[index] = head;
}

void build_untouched(uintptr_t index) {
  auto** big = static_cast<Small**>(std::malloc(g_big_bytes));
  *big = nullptr;
  for (size_t i = 0; i < g_small; ++i) {
    auto* s = static_cast<Small*>(std::malloc(sizeof(Small)));
    s->next = *big;
    s->value = index * 1'000'003 + i;
    *big = s;
  }
  g_lists[index] = big;
}

void* worker(void* arg) {
  const auto index = reinterpret_cast<uintptr_t>(arg);
  if (g_untouched) {
    build_untouched(index);
  } else {
    build_lists(index);
  }
  pthread_barrier_wait(&g_built);
  pthread_barrier_wait(&g_snapshot_done);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  g_scattered = argc > 3 && std::strcmp(argv[3], "scattered") == 0;
  g_untouched = argc > 4 && std::strcmp(argv[3], "untouched") == 0;
  if (threads == 0 || threads > kMaxThreads) return 2;
  g_blocks_per_thread = mib * 1024 * 1024 / kBlock / threads;
  g_big_bytes = mib * 1024 * 1024 / threads;
  g_small = g_untouched ? std::strtoul(argv[4], nullptr, 10) : 0;
  pthread_barrier_init(&g_built, nullptr, static_cast<unsigned>(threads + 1));
  pthread_barrier_init(&g_snapshot_done, nullptr, static_cast<unsigned>(threads + 1));
  std::vector<pthread_t> ids(threads);
  for (size_t t = 0; t < threads; ++t)
    pthread_create(&ids[t], nullptr, worker, reinterpret_cast<void*>(static_cast<uintptr_t>(t)));
  pthread_barrier_wait(&g_built);
  const int taken = memloupe_snapshot ? memloupe_snapshot("all built") : 0;
  pthread_barrier_wait(&g_snapshot_done);
  for (pthread_t id : ids) pthread_join(id, nullptr);
  uint64_t sum = 0, count = 0;
  for (size_t t = 0; t < threads; ++t) {
    if (g_untouched) {
      for (const Small* s = *static_cast<Small**>(g_lists[t]); s != nullptr; s = s->next) sum += s->value, ++count;
    } else {
      for (const Block* b = static_cast<Block*>(g_lists[t]); b != nullptr; b = b->next) sum += b->value, ++count;
    }
  }
  if (g_untouched) {
    std::printf("%zu threads, %zu MiB in %zu blocks, %llu small blocks, checksum %llu, snapshot %s\n", threads,
                g_big_bytes * threads >> 20, threads, static_cast<unsigned long long>(count),
                static_cast<unsigned long long>(sum), taken == 0 ? "ok" : "refused");
  } else {
    std::printf("%zu threads, %llu blocks, checksum %llu, snapshot %s\n", threads,
                static_cast<unsigned long long>(count), static_cast<unsigned long long>(sum),
                taken == 0 ? "ok" : "refused");
  }
  return 0;
}
