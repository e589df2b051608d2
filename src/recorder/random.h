// Random numbers for the sampler: a per-thread generator and the two distributions
// the Poisson-per-byte model needs. No heap, no locks, no global state.
#pragma once

#include <cstdint>

namespace memloupe::recorder {

// SplitMix64 (Steele, Lea, Flood 2014): one 64-bit word of state, passes BigCrush,
// ~1 ns per draw. Threads seeded with different hashed seeds start at unrelated
// points of the 2^64 cycle, so their streams do not overlap in practice.
struct Rng {
  uint64_t state = 0;

  constexpr uint64_t next() noexcept {
    uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  // Uniform in the open interval (0, 1): never 0 (log(0)) and never 1 (a zero gap).
  double open_unit() noexcept {
    return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53;
  }
};

// The seed-mixing step of SplitMix64, for deriving per-thread seeds.
constexpr uint64_t mix64(uint64_t x) noexcept { return Rng{x}.next(); }

// Exponential with the given mean.
double exponential(Rng& rng, double mean) noexcept;

// Poisson with mean `mu` >= 0, exactly distributed (no normal approximation), in
// O(1) expected time for any mu: sequential-search inversion below 10, Hörmann's
// transformed rejection with squeeze (PTRS, 1993) above. Saturates at 2^62.
uint64_t poisson(Rng& rng, double mu) noexcept;

}  // namespace memloupe::recorder
