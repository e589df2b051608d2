// Bytes and blocks counted together: every figure of the retention analysis
// is both.
#pragma once

#include <cstdint>

namespace memloupe::retention {

struct Amount {
  uint64_t bytes = 0;
  uint64_t blocks = 0;

  void add(uint64_t size) {
    bytes += size;
    ++blocks;
  }
  Amount& operator+=(const Amount& o) {
    bytes += o.bytes;
    blocks += o.blocks;
    return *this;
  }
  bool operator==(const Amount&) const = default;
};

}  // namespace memloupe::retention
