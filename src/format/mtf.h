// A move-to-front list of up to 31 entries (memtrace's name coder): a value
// recently used is found near the front and coded by its position (0..30);
// code 31 means "new value follows", which is pushed at the front, dropping the
// last entry when full. Encoder and decoder apply the same moves, so their lists
// stay identical.
#pragma once

#include <cstddef>
#include <utility>

namespace memloupe::format {

template <class T>
class MoveToFront {
 public:
  static constexpr unsigned kEntries = 31;
  static constexpr unsigned kMiss = 31;

  unsigned size() const { return size_; }

  // Position of the first entry equal to `key` under `eq`, or kMiss.
  template <class K, class Eq>
  unsigned find(const K& key, Eq eq) const {
    for (unsigned i = 0; i < size_; ++i)
      if (eq(items_[i], key)) return i;
    return kMiss;
  }

  // Moves entry i (< size()) to the front and returns it.
  T& use(unsigned i) {
    T moved = std::move(items_[i]);
    for (unsigned j = i; j > 0; --j) items_[j] = std::move(items_[j - 1]);
    items_[0] = std::move(moved);
    return items_[0];
  }

  // Inserts a new entry at the front.
  T& push(T value) {
    unsigned last = size_ < kEntries ? size_++ : kEntries - 1;
    for (unsigned j = last; j > 0; --j) items_[j] = std::move(items_[j - 1]);
    items_[0] = std::move(value);
    return items_[0];
  }

 private:
  T items_[kEntries]{};
  unsigned size_ = 0;
};

}  // namespace memloupe::format
