// Seeded, allocation-free PRNG and the size distribution shared by the workloads.
// Determinism is the point: the same seed gives the same sequence of calls, so a
// workload's allocation-call count and checksum are identical run to run.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>

namespace bench {

// splitmix64: tiny state, good enough statistics for choosing sizes and branches.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // Uniform in [0, n); n > 0. The modulo bias is irrelevant for a workload.
  uint64_t below(uint64_t n) { return next() % n; }

  // True with probability 1/n.
  bool one_in(uint64_t n) { return below(n) == 0; }

 private:
  uint64_t state_;
};

// Block sizes from 16 B to 64 KiB, skewed small: size class k (block in
// [16·2^k, 32·2^k)) has probability 2^-(k+1), the last class k = 11 takes the rest.
// Mean ≈ 156 B; most calls are small, most bytes are in the rare large blocks.
inline size_t skewed_size(Rng& rng) {
  constexpr unsigned kMaxClass = 11;  // 16 << 11 = 32 KiB, so sizes stay < 64 KiB
  unsigned k = std::min<unsigned>(std::countr_zero(rng.next() | (1ull << kMaxClass)), kMaxClass);
  size_t lo = size_t{16} << k;
  return lo + rng.below(lo);
}

}  // namespace bench
