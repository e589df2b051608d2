#include "recorder/snapshot/heap_scan.h"

#include <cstring>

namespace memloupe::recorder::snapshot {

HeapScan::HeapScan(const LiveBlock* blocks, size_t count, uint32_t roots,
                   format::SnapshotWriter& out) noexcept
    : blocks_(blocks), count_(count), roots_(roots), out_(out) {
  if (count != 0) {
    lo_ = blocks[0].address;
    hi_ = blocks[count - 1].end;
  }
  seen_words_ = (2 * count + 63) / 64;
  seen_map_ = Mapping::anonymous(seen_words_ * sizeof(uint64_t) + 8);
  touched_map_ = Mapping::anonymous(kTouched * sizeof(uint32_t));
  if (seen_map_ && touched_map_) {
    seen_ = static_cast<uint64_t*>(seen_map_.data());
    touched_ = static_cast<uint32_t*>(touched_map_.data());
  }
}

void HeapScan::new_node(uint32_t from) noexcept {
  node_ = from;
  if (seen_ == nullptr) return;
  if (overflow_) {
    std::memset(seen_, 0, seen_words_ * sizeof(uint64_t));
  } else {
    for (size_t i = 0; i < n_touched_; ++i) seen_[touched_[i] / 32] = 0;
  }
  n_touched_ = 0;
  overflow_ = false;
}

inline bool HeapScan::first_edge(uint32_t to, bool interior) noexcept {
  if (seen_ == nullptr) return true;
  const uint64_t bit = 2 * uint64_t{to} + (interior ? 1 : 0);
  uint64_t& word = seen_[bit / 64];
  const uint64_t mask = uint64_t{1} << (bit % 64);
  if (word & mask) return false;
  word |= mask;
  if (n_touched_ < kTouched) {
    touched_[n_touched_++] = to;  // to / 32 is the bitmap word that holds both of its bits
  } else {
    overflow_ = true;
  }
  return true;
}

inline void HeapScan::word(uint32_t from, uint64_t w, uint64_t offset) noexcept {
  if (w < lo_ || w >= hi_) return;
  // Neighbouring words often point into the same block (a block's fields, an
  // array of pointers to one object): try the last block found first.
  if (w - blocks_[last_].address < blocks_[last_].end - blocks_[last_].address) {
    emit(from, static_cast<uint32_t>(last_), w, offset);
    return;
  }
  // The last block starting at or before w.
  size_t lo = 0, hi = count_;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    if (blocks_[mid].address <= w) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  const LiveBlock& b = blocks_[lo];
  if (w < b.address || w >= b.end) return;
  last_ = lo;
  emit(from, static_cast<uint32_t>(lo), w, offset);
}

inline void HeapScan::emit(uint32_t from, uint32_t to, uint64_t w, uint64_t offset) noexcept {
  const bool interior = w != blocks_[to].address;
  if (from < roots_) {
    out_.edge(from, to, interior, offset);
    return;
  }
  // A start pointer is kept even after an interior one to the same block: the
  // loader merges them (an edge is interior only if no word points at the start).
  if (first_edge(to, interior)) out_.edge(from, to, interior, 0);
}

// The words read belong to the program (other threads' stacks, blocks next to
// redzones): a sanitizer must not check them.
__attribute__((no_sanitize("address"))) void HeapScan::scan_range(uint32_t from, uintptr_t begin,
                                                                  uintptr_t end, uintptr_t base) noexcept {
  if (from != node_) new_node(from);
  begin = (begin + 7) & ~uintptr_t{7};
  if (end < begin + 8) return;
  end &= ~uintptr_t{7};
  bytes_ += end - begin;
  for (uintptr_t p = begin; p < end; p += 8) {
    uint64_t w;
    __builtin_memcpy(&w, reinterpret_cast<const void*>(p), sizeof w);
    word(from, w, p - base);
  }
}

void HeapScan::scan_words(uint32_t from, const uint64_t* words, size_t n) noexcept {
  if (from != node_) new_node(from);
  bytes_ += n * 8;
  for (size_t i = 0; i < n; ++i) word(from, words[i], i * 8);
}

}  // namespace memloupe::recorder::snapshot
