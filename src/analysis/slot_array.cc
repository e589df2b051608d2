#include "analysis/slot_array.h"

#include <sys/mman.h>

#include <cstdint>

namespace memloupe::analysis::slot_array_detail {

namespace {
constexpr size_t kHuge = size_t{2} << 20;
constexpr size_t kPage = 4096;
size_t rounded(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }
}  // namespace

void* map(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (bytes < kHuge) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  // Over-map by 2 MiB and unmap the ends, leaving a 2 MiB-aligned span (a
  // huge page must be aligned to its size).
  const size_t span = rounded(bytes, kHuge);
  void* p = mmap(nullptr, span + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = rounded(start, kHuge);
  if (aligned > start) munmap(p, aligned - start);
  munmap(reinterpret_cast<void*>(aligned + span), start + span + kHuge - (aligned + span));
  madvise(reinterpret_cast<void*>(aligned), span, MADV_HUGEPAGE);  // (a hint: EINVAL without THP)
  return reinterpret_cast<void*>(aligned);
}

void unmap(void* p, size_t bytes) noexcept {
  if (bytes == 0) bytes = 1;
  munmap(p, bytes < kHuge ? rounded(bytes, kPage) : rounded(bytes, kHuge));
}

}  // namespace memloupe::analysis::slot_array_detail
