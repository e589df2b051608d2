// Which allocations are sampled, and how many samples each one carries.
//
// THE MODEL. Lay every byte a thread allocates end to end, in allocation order.
// Sample points form a Poisson process of rate λ = 1/mean on that line (mean =
// MEMLOUPE_EVERY, bytes between samples). A block of n bytes holds
//
//     N ~ Poisson(λ·n)
//
// points, independently of every other block; it is "sampled" when N ≥ 1 and the
// trace records N as the block's n_samples. Memoryless, so it does not matter how
// the bytes are cut into blocks, nor whether several threads share the stream.
//
// THE ESTIMATOR. For any set S of blocks chosen without looking at the samples
// (an allocation site, a time window, the blocks live at time t):
//
//     E[Σ_S N] = λ·bytes(S)          =>   bytes(S) ≈ mean · Σ_S N   (unbiased)
//     Var[mean · Σ_S N] = mean²·λ·bytes(S) = mean · bytes(S)
//
// so the relative standard error is sqrt(mean / bytes(S)): 1/sqrt(expected samples).
// Counts of blocks: a block of n bytes is sampled with p(n) = 1 - exp(-n/mean), so
// Σ_sampled 1/p(n) estimates the number of blocks (Horvitz–Thompson), as jemalloc
// and pprof do. With continuous points instead of one Bernoulli trial per byte
// (geometric gaps), estimates differ by O(λ) relative — invisible at λ = 2^-19 —
// and a huge block's count is one Poisson draw instead of a binomial.
//
// THE MECHANICS. The distance from the current position to the next point is an
// exponential draw g. The hot path keeps countdown = ceil(g) in an integer and
// subtracts each block's size: the block [s, s+n) contains the point exactly when
// ceil(g) ≤ n, i.e. countdown - n ≤ 0 — one subtraction and one branch. The lost
// fraction `offset` = ceil(g) - g is kept for the slow path, which then knows the
// point lies `before - offset` bytes into the block and draws the further points
// in the exact remaining length. After the block, by memorylessness, the next gap
// is a fresh exponential whatever happened inside it.
#pragma once

#include <cstdint>

#include "recorder/random.h"

namespace memloupe::recorder {

// Where the next sample point lies, relative to the current position.
struct Gap {
  int64_t countdown = 0;  // ceil(distance) in bytes, >= 1
  float offset = 0;       // countdown - distance, in [0, 1)
};

// A fresh gap (the distance to the next point from here).
Gap next_gap(Rng& rng, double mean) noexcept;

// For a block of `size` bytes that contains the pending point (before.countdown <=
// size): how many points it holds, >= 1. Saturates at UINT32_MAX (a 2 PiB block at
// the default mean).
uint32_t samples_in_block(Rng& rng, double mean, Gap before, uint64_t size) noexcept;

// One allocation of `size` bytes, start to finish: its sample count (0 when the
// block ends before the pending point) and the gap after it. The hooks' fast path
// is the inlined first half of this; tests drive it directly.
struct Step {
  uint32_t n_samples = 0;
  Gap after;
};
Step sample_block(Rng& rng, double mean, Gap before, uint64_t size) noexcept;

}  // namespace memloupe::recorder
