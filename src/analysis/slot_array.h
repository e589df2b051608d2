// SlotArray: a fixed array of n copies of a value in pages of its own, for
// LiveTable's window. The index makes one LiveTable<Block, 64 Ki> (2 MiB)
// for every trace, however short: as 4 KiB pages that was 512 page faults,
// each a trap and a page zeroed by the kernel, before the first event (513
// of a trivial `memloupe run`'s ~4,600; ~1.5 ms here, 0.1 ms as one huge
// page). An array of 2 MiB and more is mapped on a 2 MiB boundary and
// madvise(MADV_HUGEPAGE)d, so that where the kernel has transparent huge
// pages ("always" or "madvise") it is one fault; elsewhere, or when no huge
// page is free, it is the same pages as before. The slots are reached as
// through a vector (a base pointer and an index): nothing changes on the
// per-event path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>

namespace memloupe::analysis {

namespace slot_array_detail {
// Anonymous pages for `bytes` (aligned to 2 MiB, huge pages asked for, from
// 2 MiB); throws std::bad_alloc.
void* map(size_t bytes);
void unmap(void* p, size_t bytes) noexcept;
}  // namespace slot_array_detail

template <class T>
class SlotArray {
  static_assert(std::is_trivially_destructible_v<T>, "unmapped without destructors");

 public:
  SlotArray(size_t n, const T& value) : n_(n), data_(static_cast<T*>(slot_array_detail::map(n * sizeof(T)))) {
    std::uninitialized_fill_n(data_, n, value);
  }
  SlotArray(const SlotArray& o) : n_(o.n_), data_(static_cast<T*>(slot_array_detail::map(n_ * sizeof(T)))) {
    std::uninitialized_copy_n(o.data_, n_, data_);
  }
  SlotArray& operator=(const SlotArray& o) {
    if (this != &o) std::copy_n(o.data_, n_, data_);  // (same n: one LiveTable type's)
    return *this;
  }
  ~SlotArray() { slot_array_detail::unmap(data_, n_ * sizeof(T)); }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  size_t n_;
  T* data_;
};

}  // namespace memloupe::analysis
