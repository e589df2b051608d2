// A program whose heap has known roots and known bytes, for the heap snapshot
// tests (tests/retention/). Every block has a size no other block of the
// program has, so a test can find it by size. It takes one snapshot with
// memloupe_snapshot("inside") while with_buffer() holds a buffer on its stack
// and a second thread holds a block in its TLS; the recorder takes another at
// exit (after the static destructors, as memcheck's leak check).
//
// With the argument "wait" it only builds the globals and the ring, prints
// "ready" and waits for SIGUSR1 (a snapshot is then asked for by signal).
#include <memloupe/memloupe.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

struct ChainNode {  // 72 bytes
  ChainNode* next;
  char pad[64];
};
struct RingNode {  // 136 bytes
  RingNode* next;
  char pad[128];
};

// Globals holding containers: a 808-byte vector buffer, three 40-byte map nodes.
std::vector<uint64_t> g_vector;
std::map<int, int> g_map;
// A pointer chain: g_chain -> 72 -> 72 -> 72.
ChainNode* g_chain;
// Two globals sharing one 1000-byte block.
char* g_shared_a;
char* g_shared_b;
// A 408-byte block reached only through a pointer 16 bytes inside it.
char* g_interior;
// The second thread's block (504 bytes), held only by its TLS.
thread_local void* t_held;

namespace {

int g_ready[2], g_go[2];

template <class T>
T* make(size_t bytes) {
  void* p = std::malloc(bytes);
  std::memset(p, 0, bytes);
  return static_cast<T*>(p);
}

// Overwrites the stack below the caller, so that no stale copy of a pointer the
// thread once had in a register is left where a scan of its stack would see it.
__attribute__((noinline)) void scrub_stack() {
  volatile char junk[8192];
  for (size_t i = 0; i < sizeof(junk); ++i) junk[i] = 0;
}

__attribute__((noinline)) void hold_in_tls() { t_held = make<char>(504); }

void* tls_thread(void*) {
  hold_in_tls();
  scrub_stack();
  char c = 1;
  if (write(g_ready[1], &c, 1) != 1 || read(g_go[0], &c, 1) != 1) std::abort();
  std::free(t_held);
  t_held = nullptr;
  return nullptr;
}

// The frame that holds a 3000-byte buffer while the snapshot is taken.
extern "C" __attribute__((noinline)) int with_buffer() {
  char* volatile buffer = make<char>(3000);
  const int taken = memloupe_snapshot ? memloupe_snapshot("inside") : -1;
  std::free(buffer);
  return taken;
}

__attribute__((noinline)) void leak_ring() {
  RingNode* a = make<RingNode>(sizeof(RingNode));
  RingNode* b = make<RingNode>(sizeof(RingNode));
  RingNode* c = make<RingNode>(sizeof(RingNode));
  a->next = b;
  b->next = c;
  c->next = a;
}

__attribute__((noinline)) void build_globals() {
  g_vector.reserve(101);
  for (int i = 0; i < 3; ++i) g_map[i] = i;
  ChainNode* third = make<ChainNode>(sizeof(ChainNode));
  ChainNode* second = make<ChainNode>(sizeof(ChainNode));
  second->next = third;
  g_chain = make<ChainNode>(sizeof(ChainNode));
  g_chain->next = second;
  g_shared_a = g_shared_b = make<char>(1000);
  g_interior = make<char>(408) + 16;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "wait") == 0) {
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &usr1, nullptr);
    build_globals();
    leak_ring();
    std::printf("ready\n");
    std::fflush(stdout);
    int sig = 0;
    sigwait(&usr1, &sig);
    return 0;
  }
  if (pipe(g_ready) != 0 || pipe(g_go) != 0) return 1;
  build_globals();
  leak_ring();
  scrub_stack();
  pthread_t thread;
  if (pthread_create(&thread, nullptr, tls_thread, nullptr) != 0) return 1;
  char c;
  if (read(g_ready[0], &c, 1) != 1) return 1;
  const int taken = with_buffer();
  if (write(g_go[1], &c, 1) != 1) return 1;
  pthread_join(thread, nullptr);
  std::printf("vector %zu, map %zu, snapshot %s\n", g_vector.capacity(), g_map.size(),
              taken == 0 || !memloupe_snapshot ? "ok" : "refused");
  return 0;
}
