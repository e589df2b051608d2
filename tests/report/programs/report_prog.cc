// The program the report's browser test records with `memloupe run`: heap
// allocations from many distinct call sites (60 from allocate_at_site<N>
// through two callers, so the site table has more rows than one page shows and
// the flame graph has depth), some freed,
// some kept to the end, some leaked; anonymous mmaps (the timeline's mapped
// series); and a run long enough (~0.4 s) for the recorder's RSS samples to
// draw a curve. Prints "report_prog ok".
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

std::vector<std::unique_ptr<char[]>> g_kept;

// One call site per N: each instantiation is its own function.
template <int N>
__attribute__((noinline)) void allocate_at_site(size_t count, size_t size, bool keep) {
  for (size_t i = 0; i < count; ++i) {
    auto block = std::make_unique<char[]>(size + N);
    std::memset(block.get(), N, size + N);
    if (keep) g_kept.push_back(std::move(block));
  }
}

template <int... N>
__attribute__((noinline)) void every_site(std::integer_sequence<int, N...>, size_t count) {
  (allocate_at_site<N>(count * (N + 1), 64 * (N + 1), N % 3 == 0), ...);
}

__attribute__((noinline)) void phase_one() { every_site(std::make_integer_sequence<int, 30>{}, 30); }
__attribute__((noinline)) void phase_two() { every_site(std::make_integer_sequence<int, 30>{}, 15); }

__attribute__((noinline)) std::vector<std::string> build_strings(size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i) out.push_back(std::string(40 + i % 50, 'x'));
  return out;
}

__attribute__((noinline)) void* leak_buffers(size_t n) {
  void* last = nullptr;
  for (size_t i = 0; i < n; ++i) {
    last = std::malloc(4096);  // never freed
    std::memset(last, 1, 4096);
  }
  return last;
}

__attribute__((noinline)) std::vector<void*> map_arenas(size_t n, size_t bytes) {
  std::vector<void*> maps;
  for (size_t i = 0; i < n; ++i) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) continue;
    std::memset(p, 2, bytes);  // resident, so RSS follows
    maps.push_back(p);
  }
  return maps;
}

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

int main() {
  phase_one();
  pause_ms(80);
  std::vector<std::string> strings = build_strings(20000);
  std::vector<void*> maps = map_arenas(6, 4 << 20);
  pause_ms(80);
  phase_two();
  leak_buffers(64);
  pause_ms(80);
  strings.clear();
  strings.shrink_to_fit();
  for (size_t i = 0; i + 2 < maps.size(); ++i) munmap(maps[i], 4 << 20);
  pause_ms(120);
  g_kept.clear();
  std::puts("report_prog ok");
  return 0;
}
