#include "reader/zeroed.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

#include "format/history.h"

namespace memloupe::reader {
namespace {

// The EventDecoder's alloc history from calloc is the one make_unique gave
// (which value-initialises it): a member with a non-zero initial value would
// differ here.
TEST(Zeroed, AnAllocHistoryFromCallocIsANewOne) {
  const Zeroed<format::AllocHistory> zeroed = zeroed_object<format::AllocHistory>();
  const auto made = std::make_unique<format::AllocHistory>();
  EXPECT_EQ(std::memcmp(zeroed.get(), made.get(), sizeof(format::AllocHistory)), 0);
}

TEST(Zeroed, AnArrayIsZero) {
  constexpr size_t kN = 1 << 16;  // past malloc's mmap threshold
  const Zeroed<uint64_t[]> a = zeroed_array<uint64_t>(kN);
  for (size_t i = 0; i < kN; ++i) ASSERT_EQ(a[i], 0u) << i;
}

}  // namespace
}  // namespace memloupe::reader
