// The suite's workload "(d) cc1plus": g++'s own compiler proper (cc1plus, from
// Debian's g++) compiling this file, preprocessed by `g++ -E` when the suite starts.
// Nobody on this project wrote cc1plus: it is the suite's program outside our design,
// allocation-heavy (GCC's garbage collector, obstacks, hash tables), single-threaded,
// with deep recursive parser stacks. The size (MEMLOUPE_BENCH_HEADERS) chooses how
// much of the standard library the translation unit pulls in.
#include <map>
#include <string>
#include <vector>
#if MEMLOUPE_BENCH_HEADERS >= 2
#include <iostream>
#include <memory>
#include <unordered_map>
#endif
#if MEMLOUPE_BENCH_HEADERS >= 3
#include <regex>
#endif

int main() {
  std::map<std::string, std::vector<int>> m;
  m["a"].push_back(1);
#if MEMLOUPE_BENCH_HEADERS >= 2
  for (auto& [k, v] : m) std::cout << k << v.size();
#endif
#if MEMLOUPE_BENCH_HEADERS >= 3
  std::regex r("a+b");
  return std::regex_match("aab", r) ? 0 : 1;
#else
  return static_cast<int>(m.size()) - 1;
#endif
}
