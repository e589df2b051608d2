#include "analysis/stack_table.h"

#include <algorithm>

namespace memloupe::analysis {
namespace {

uint64_t hash_frames(std::span<const uint64_t> frames) {
  uint64_t h = 0x243F6A8885A308D3ull ^ frames.size();
  for (uint64_t f : frames) {
    h ^= f;
    h *= 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  return h;
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
        std::equal(frames.begin(), frames.end(), pool_.begin() + static_cast<ptrdiff_t>(r.begin))) {
      return {id, false};
    }
  }
  const uint32_t id = static_cast<uint32_t>(ranges_.size());
  ranges_.push_back(Range{pool_.size(), static_cast<uint32_t>(frames.size()), tag});
  pool_.insert(pool_.end(), frames.begin(), frames.end());
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
