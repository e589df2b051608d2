// A fixed array of zero-filled elements in pages of its own, for a large table
// made and filled at once after a followed program's exit (the series
// replay's DenseSeries, aggregate.cc): fresh anonymous pages are zero already,
// so there is no memset pass over it, and they are asked for as transparent
// huge pages and faulted in at once, writable, rather than a fault or two per
// 4 KiB as it fills (the memset and its faults were ~5 ms of the serial wait after the
// suite's (b) exited: docs/RECORDER.md, "What is left after the exit,
// 2026-11-26 (third day)"). Where huge pages are off, plain pages, as before.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace memloupe::analysis {

template <class T>
class ZeroedPages {
  // All-zero bytes must be a value-initialised T.
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

 public:
  explicit ZeroedPages(size_t n) : size_(n) {
    if (n == 0) return;
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    // Hints both: failing them leaves plain pages faulted in on first touch.
    madvise(p, bytes(), MADV_HUGEPAGE);
#ifdef MADV_POPULATE_WRITE
    // Faulted in writable now, in one call: the table's cells are read before
    // they are written (+=), and a read of an untouched page maps the shared
    // zero page, so each page took two faults, the second (copy on write)
    // with a TLB flush on every CPU the process runs on.
    madvise(p, bytes(), MADV_POPULATE_WRITE);
#endif
    data_ = static_cast<T*>(p);
  }
  ZeroedPages(ZeroedPages&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroedPages& operator=(ZeroedPages&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~ZeroedPages() {
    if (data_) munmap(data_, bytes());
  }

  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  size_t size() const { return size_; }

 private:
  size_t bytes() const { return size_ * sizeof(T); }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace memloupe::analysis
