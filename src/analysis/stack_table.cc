#include "analysis/stack_table.h"

#include <algorithm>
#include <cassert>

namespace memloupe::analysis {
namespace {

// Two independent multiply-mix lanes over alternate frames, so the multiplies
// of a deep stack overlap instead of waiting on each other.
uint64_t hash_frames(std::span<const uint64_t> frames) {
  constexpr uint64_t kMul = 0x9E3779B97F4A7C15ull;
  uint64_t a = 0x243F6A8885A308D3ull ^ frames.size(), b = 0x13198A2E03707344ull;
  size_t i = 0;
  for (; i + 1 < frames.size(); i += 2) {
    a = (a ^ frames[i]) * kMul;
    b = (b ^ frames[i + 1]) * kMul;
    a ^= a >> 29;
    b ^= b >> 29;
  }
  if (i < frames.size()) a = (a ^ frames[i]) * kMul;
  uint64_t h = (a ^ (b * 0xC2B2AE3D27D4EB4Full)) * kMul;
  return h ^ (h >> 32);
}

}  // namespace

StackTable::StackTable() : index_(1024, kEmpty), mask_(1023) {}

std::pair<uint32_t, bool> StackTable::intern(std::span<const uint64_t> frames) {
  const uint64_t h = hash_frames(frames);
  const uint32_t tag = static_cast<uint32_t>(h);
  size_t i = static_cast<size_t>(h >> 20) & mask_;
  for (;; i = (i + 1) & mask_) {
    const uint32_t id = index_[i];
    if (id == kEmpty) break;
    const Range& r = ranges_[id];
    if (r.hash == tag && r.size == frames.size() &&
        std::equal(frames.begin(), frames.end(), base_ + r.begin)) {
      return {id, false};
    }
  }
  assert(base_ == pool_.data());  // (not lent)
  const uint32_t id = static_cast<uint32_t>(ranges_.size());
  ranges_.push_back(Range{pool_.size(), static_cast<uint32_t>(frames.size()), tag});
  pool_.insert(pool_.end(), frames.begin(), frames.end());
  base_ = pool_.data();
  index_[i] = id;
  if (ranges_.size() * 2 > index_.size()) grow();
  return {id, true};
}

void StackTable::grow() {
  index_.assign(index_.size() * 2, kEmpty);
  mask_ = index_.size() - 1;
  for (uint32_t id = 0; id < ranges_.size(); ++id) {
    const uint64_t h = hash_frames(frames(id));
    size_t i = static_cast<size_t>(h >> 20) & mask_;
    while (index_[i] != kEmpty) i = (i + 1) & mask_;
    index_[i] = id;
  }
}

}  // namespace memloupe::analysis
