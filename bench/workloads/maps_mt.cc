// Outside the suite: two threads, each keeping a std::map<string, vector<int>>
// (an entry is erased once it holds 20 values) and an unordered_map<int, string>
// whose 3,000 values are overwritten in turn, with a sorted batch of short-lived
// strings now and then. Written as a stand-in for a server's per-thread caches,
// not tuned to memloupe: it is where the trace's block references were found to
// cost more than heaptrack's whole file (docs/FORMAT.md §9, "Version 4"). The
// README's figures for "a program outside the suite" are this one at the default
// size. Deterministic per thread; the threads' interleaving is not.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "args.h"

namespace {

long work(int seed, int n) {
  long sum = 0;
  std::map<std::string, std::vector<int>> m;
  std::unordered_map<int, std::string> u;
  for (int i = 0; i < n; ++i) {
    // i * 7919 passes INT_MAX: wrapped as the measured build's imul did, without
    // the signed overflow (a conversion to int is modular since C++20).
    const int mixed = static_cast<int>(static_cast<int64_t>(i) * 7919);
    std::string k = "key" + std::to_string((mixed + seed) % 5000);
    auto& v = m[k];
    v.push_back(i);
    if (v.size() > 20) m.erase(k);
    u[i % 3000] = std::string(16 + i % 64, 'x');
    if (i % 97 == 0) {
      std::vector<std::string> tmp;
      for (int j = 0; j < 50; ++j) tmp.push_back(std::to_string(j * i));
      std::sort(tmp.begin(), tmp.end());
      sum += static_cast<long>(tmp[0].size());
    }
    sum += static_cast<long>(u.size() + m.size());
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t iterations = 1'000'000;
  bench::parse_args(argc, argv, {{"iterations", &iterations, "iterations per thread"}});
  const int n = static_cast<int>(iterations);
  long a = 0, b = 0;
  std::thread t1([&] { a = work(1, n); });
  std::thread t2([&] { b = work(2, n); });
  t1.join();
  t2.join();
  std::printf("checksum=%ld\n", a + b);
}
