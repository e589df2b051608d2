// Checks unwind_here against return addresses the frames record themselves.
#include "recorder/unwind/unwind.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace memloupe::recorder {
namespace {

// Each level records where it will return to, so the expected chain is known without
// any unwinder: chain[i] is the return address of the i-th frame counted from the
// innermost.
struct Chain {
  std::vector<uint64_t> expected;  // innermost first
  uint64_t got[512];
  size_t n = 0;
};

__attribute__((noinline)) void leaf(Chain& c, size_t max, size_t skip) {
  c.expected.insert(c.expected.begin(),
                    reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  c.n = unwind_here(c.got, max, skip);
  asm volatile("" ::: "memory");
}

__attribute__((noinline)) void recurse(Chain& c, int depth, size_t max, size_t skip) {
  if (depth == 0) {
    leaf(c, max, skip);
  } else {
    recurse(c, depth - 1, max, skip);
  }
  c.expected.push_back(reinterpret_cast<uintptr_t>(__builtin_return_address(0)));
  asm volatile("" ::: "memory");
}

TEST(Unwind, BaselineMatchesRecordedChain) {
  Chain c;
  recurse(c, 10, 64, 0);
  // got[0] lies in leaf (where unwind_here returns to); then leaf's own return
  // address, the ten recursive frames and the test body.
  ASSERT_EQ(c.expected.size(), 12u);
  ASSERT_GE(c.n, 13u);
  for (size_t i = 0; i < c.expected.size(); ++i) EXPECT_EQ(c.got[i + 1], c.expected[i]) << i;
}

}  // namespace
}  // namespace memloupe::recorder
