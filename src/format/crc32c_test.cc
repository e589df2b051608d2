#include "format/crc32c.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

namespace memloupe::format {
namespace {

uint32_t crc(const std::vector<uint8_t>& v) { return crc32c(v.data(), v.size()); }

// Check values from RFC 3720 (iSCSI), appendix B.4, and the usual "123456789".
TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(reinterpret_cast<const uint8_t*>("123456789"), 9), 0xE3069283u);
  EXPECT_EQ(crc(std::vector<uint8_t>(32, 0x00)), 0x8A9136AAu);
  EXPECT_EQ(crc(std::vector<uint8_t>(32, 0xFF)), 0x62A8AB43u);
  std::vector<uint8_t> inc(32), dec(32);
  for (unsigned i = 0; i < 32; ++i) {
    inc[i] = static_cast<uint8_t>(i);
    dec[i] = static_cast<uint8_t>(31 - i);
  }
  EXPECT_EQ(crc(inc), 0x46DD794Eu);
  EXPECT_EQ(crc(dec), 0x113FDB5Cu);
  EXPECT_EQ(crc32c(nullptr, 0), 0u);
}

// crc32c() uses the CPU's instruction where it can: it must agree with the
// tables on every length and alignment, chained or not.
TEST(Crc32c, InstructionAndTablesAgree) {
  std::vector<uint8_t> data(4096 + 16);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint8_t& b : data) b = static_cast<uint8_t>((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  for (size_t start = 0; start < 16; ++start)
    for (size_t n : {0u, 1u, 7u, 8u, 9u, 15u, 16u, 63u, 64u, 65u, 1000u, 4096u}) {
      const uint8_t* p = data.data() + start;
      EXPECT_EQ(crc32c(p, n), crc32c_portable(p, n)) << start << " " << n;
      EXPECT_EQ(crc32c(p, n, 0x12345678u), crc32c_portable(p, n, 0x12345678u)) << start << " " << n;
    }
  EXPECT_EQ(crc32c_portable(reinterpret_cast<const uint8_t*>("123456789"), 9), 0xE3069283u);
}

// Long inputs run three blocks at once and join them (crc32c.cc): every
// length around the multiples of the three blocks, at odd starts and seeds.
TEST(Crc32c, LongInputsAgreeWithTheTables) {
  std::vector<uint8_t> data(5 * 3 * 4096 + 64);
  uint64_t x = 0x243f6a8885a308d3ull;
  for (uint8_t& b : data) b = static_cast<uint8_t>((x = x * 6364136223846793005ull + 1442695040888963407ull) >> 56);
  for (size_t start : {0u, 1u, 5u})
    for (size_t blocks = 1; blocks <= 5; ++blocks)
      for (size_t extra : {0u, 1u, 8u, 13u}) {
        for (size_t n : {blocks * 3 * 4096 - 1 - extra, blocks * 3 * 4096 + extra}) {
          const uint8_t* p = data.data() + start;
          EXPECT_EQ(crc32c(p, n), crc32c_portable(p, n)) << start << " " << n;
          EXPECT_EQ(crc32c(p, n, 0xdeadbeefu), crc32c_portable(p, n, 0xdeadbeefu)) << start << " " << n;
        }
      }
}

TEST(Crc32c, ChainsAcrossPieces) {
  std::vector<uint8_t> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
  for (size_t split : {0u, 1u, 7u, 8u, 9u, 500u, 999u, 1000u}) {
    const uint32_t a = crc32c(data.data(), split);
    EXPECT_EQ(crc32c(data.data() + split, data.size() - split, a), crc(data)) << split;
  }
}

TEST(Crc32c, DetectsEverySingleByteChange) {
  std::vector<uint8_t> data(64, 0x5a);
  const uint32_t good = crc(data);
  for (size_t i = 0; i < data.size(); ++i)
    for (uint8_t x : {0x01, 0x80, 0xff}) {
      data[i] ^= x;
      EXPECT_NE(crc(data), good);
      data[i] ^= x;
    }
}

}  // namespace
}  // namespace memloupe::format
