// A deterministic program using only malloc, calloc, realloc and new/new[]
// (functions heaptrack also intercepts), to compare call counts with heaptrack.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

void* volatile sink;
// Stores where the optimiser must assume it is read (so no allocation is elided).
void* keep(void* p) {
  sink = p;
  return p;
}

int main() {
  for (int i = 0; i < 3000; ++i) std::free(keep(std::malloc(16 + i % 300)));
  for (int i = 0; i < 700; ++i) std::free(keep(std::calloc(i % 7 + 1, 24)));
  void* p = nullptr;
  for (int i = 1; i <= 400; ++i) p = std::realloc(p, 32 * static_cast<size_t>(i));
  std::free(p);
  std::map<int, std::string> m;
  for (int i = 0; i < 2000; ++i) m[i * 7919 % 2003] = std::string(20 + i % 50, 'q');
  std::vector<int*> arrays;
  for (int i = 0; i < 500; ++i) arrays.push_back(new int[static_cast<size_t>(i) + 1]);
  for (int* a : arrays) delete[] a;
  std::printf("entries %zu\n", m.size());
  return 0;
}
