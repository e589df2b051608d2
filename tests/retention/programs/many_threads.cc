// Many threads and a big heap, for the heap snapshot's stop-the-world and scan:
// THREADS threads (default 64) each build a linked list of MIB/THREADS MiB in
// 64 KiB blocks, then all wait while the main thread takes a snapshot (and the
// recorder takes another at exit). Prints a checksum of the lists, which the
// snapshot must not change. With a third argument "scattered", the words of a
// block point to many different earlier blocks of its thread instead of one
// (the scan's worst case: no two neighbouring words hit the same block).
#include <memloupe/memloupe.h>
#include <pthread.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBlock = 64 * 1024;
struct Block {
  Block* next;
  uint64_t value;
};

size_t g_blocks_per_thread = 0;
bool g_scattered = false;
pthread_barrier_t g_built, g_snapshot_done;
std::vector<Block*> g_heads;

void* worker(void* arg) {
  const auto index = reinterpret_cast<uintptr_t>(arg);
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
  g_heads[index] = head;
  pthread_barrier_wait(&g_built);
  pthread_barrier_wait(&g_snapshot_done);
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t threads = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const size_t mib = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 1024;
  g_scattered = argc > 3 && std::strcmp(argv[3], "scattered") == 0;
  g_blocks_per_thread = mib * 1024 * 1024 / kBlock / threads;
  g_heads.assign(threads, nullptr);
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
  for (Block* head : g_heads)
    for (Block* b = head; b != nullptr; b = b->next) sum += b->value, ++count;
  std::printf("%zu threads, %llu blocks, checksum %llu, snapshot %s\n", threads,
              static_cast<unsigned long long>(count), static_cast<unsigned long long>(sum),
              taken == 0 ? "ok" : "refused");
  return 0;
}
