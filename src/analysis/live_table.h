// LiveTable: the blocks currently live, keyed by AllocId.
//
// An open-addressing hash table with linear probing and backward-shift deletion
// (no tombstones, so a long trace of alloc/free pairs never degrades it). Its size
// follows the number of live blocks, not the number of events: it grows at 3/4
// load and halves when under 1/16 full. AllocIds are dense integers, so a
// Fibonacci multiplicative hash spreads them well.
//
//   slots_:  [ key | value ] [ empty ] [ key | value ] ...   key == kEmpty marks a hole
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace memloupe::analysis {

template <class Value>
class LiveTable {
 public:
  LiveTable() { rehash(kMinCapacity); }

  size_t size() const { return size_; }

  // Inserts or overwrites.
  void insert(uint64_t key, const Value& value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) rehash(slots_.size() * 2);
    size_t i = home(key);
    while (slots_[i].first != kEmpty && slots_[i].first != key) i = (i + 1) & mask_;
    if (slots_[i].first == kEmpty) ++size_;
    slots_[i] = {key, value};
  }

  Value* find(uint64_t key) {
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      if (slots_[i].first == key) return &slots_[i].second;
      if (slots_[i].first == kEmpty) return nullptr;
    }
  }

  // Removes `key` and returns its value through `out`; false if absent.
  bool take(uint64_t key, Value& out) {
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].first == key) break;
      if (slots_[i].first == kEmpty) return false;
    }
    out = slots_[i].second;
    // Backward shift: move later members of the probe run into the hole when
    // the hole lies on their way from their home slot.
    for (size_t j = (i + 1) & mask_; slots_[j].first != kEmpty; j = (j + 1) & mask_) {
      const size_t h = home(slots_[j].first);
      if (((j - h) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].first = kEmpty;
    --size_;
    if (slots_.size() > kMinCapacity && size_ * 4 < slots_.size() / 4) rehash(slots_.size() / 2);
    return true;
  }

  template <class F>
  void for_each(F&& f) const {
    for (const auto& [key, value] : slots_) {
      if (key != kEmpty) f(key, value);
    }
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  static constexpr size_t kMinCapacity = 1024;

  size_t home(uint64_t key) const { return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> shift_); }

  void rehash(size_t capacity) {
    std::vector<std::pair<uint64_t, Value>> old = std::move(slots_);
    slots_.assign(capacity, {kEmpty, Value{}});
    mask_ = capacity - 1;
    shift_ = 64 - static_cast<unsigned>(__builtin_ctzll(capacity));
    size_ = 0;
    for (const auto& [key, value] : old) {
      if (key != kEmpty) insert(key, value);
    }
  }

  std::vector<std::pair<uint64_t, Value>> slots_;
  size_t mask_ = 0;
  unsigned shift_ = 64;
  size_t size_ = 0;
};

}  // namespace memloupe::analysis
