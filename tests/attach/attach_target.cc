// The program the attach tests record: worker threads allocating steadily at two
// named sites, one thread blocked in read(2) and one in nanosleep(2) the whole
// time (both retry on EINTR, which an attach may cause), and a deterministic
// output and exit status the test compares with an unrecorded run.
//
//   attach_target ITERATIONS [STOP_FILE]
// prints "ready" once every thread runs; each worker runs ITERATIONS rounds and,
// given STOP_FILE, goes on until that file exists (so a test decides how long it
// runs, however slow the build). The output covers the first ITERATIONS rounds.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>
#include <vector>

namespace {

constexpr int kWorkers = 3;
std::atomic<int> g_running{0};
int g_pipe[2];

extern "C" __attribute__((noinline)) void* attach_site_alpha(size_t n) {
  void* p = std::malloc(n);
  std::memset(p, static_cast<int>(n & 0xff), n);
  asm volatile("" ::: "memory");
  return p;
}

__attribute__((noinline)) char* attach_site_beta(size_t n) {
  char* p = new char[n];
  std::memset(p, 1, n);
  asm volatile("" ::: "memory");
  return p;
}

const char* g_stop_file = nullptr;

bool go_on(int i, int iterations) {
  return i < iterations || (g_stop_file != nullptr && access(g_stop_file, F_OK) != 0);
}

void worker(int index, int iterations, uint64_t* checksum) {
  g_running.fetch_add(1);
  uint64_t sum = 0;
  for (int i = 0; go_on(i, iterations); ++i) {
    void* blocks[16];
    char* arrays[16];
    for (int k = 0; k < 16; ++k) {
      const size_t n = 1000 + static_cast<size_t>((i * 16 + k) % 97) * 100 + static_cast<size_t>(index);
      blocks[k] = attach_site_alpha(n);
      arrays[k] = attach_site_beta(n / 2);
      if (i < iterations) sum += static_cast<unsigned char*>(blocks[k])[n - 1] + static_cast<size_t>(arrays[k][0]);
    }
    for (int k = 0; k < 16; ++k) {
      std::free(blocks[k]);
      delete[] arrays[k];
    }
    const timespec pause{0, 1'000'000};
    timespec left;
    if (nanosleep(&pause, &left) != 0 && errno == EINTR) nanosleep(&left, nullptr);
  }
  *checksum = sum;
}

// Blocked in read(2) until main writes the byte; EINTR is retried.
void reader(char* got) {
  g_running.fetch_add(1);
  for (;;) {
    const ssize_t n = ::read(g_pipe[0], got, 1);
    if (n == 1) return;
    if (n < 0 && errno == EINTR) continue;
    *got = '?';
    return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::atoi(argv[1]) : 3000;
  if (argc > 2) g_stop_file = argv[2];
  if (pipe(g_pipe) != 0) return 2;
  uint64_t sums[kWorkers] = {};
  char got = 0;
  std::thread r(reader, &got);
  std::vector<std::thread> workers;
  for (int i = 0; i < kWorkers; ++i) workers.emplace_back(worker, i, iterations, &sums[i]);
  while (g_running.load() < kWorkers + 1) std::this_thread::yield();
  std::printf("ready\n");
  std::fflush(stdout);
  for (auto& w : workers) w.join();
  if (::write(g_pipe[1], "x", 1) != 1) return 3;
  r.join();
  for (int i = 0; i < kWorkers; ++i) std::printf("worker %d: %llu\n", i, static_cast<unsigned long long>(sums[i]));
  std::printf("reader: %c\n", got);
  return 7;
}
