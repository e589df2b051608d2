#include "format/varint.h"

#include <gtest/gtest.h>

#include <vector>

namespace memloupe::format {
namespace {

std::vector<uint8_t> enc(uint64_t v) {
  uint8_t buf[kMaxVarint];
  return {buf, put_varint(buf, v)};
}

TEST(Varint, KnownEncodings) {
  EXPECT_EQ(enc(0), (std::vector<uint8_t>{0x00}));
  EXPECT_EQ(enc(127), (std::vector<uint8_t>{0x7f}));
  EXPECT_EQ(enc(128), (std::vector<uint8_t>{0x80, 0x01}));
  EXPECT_EQ(enc(300), (std::vector<uint8_t>{0xac, 0x02}));
  EXPECT_EQ(enc(~uint64_t{0}),
            (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
}

TEST(Varint, SizeMatchesEncoding) {
  for (unsigned bit = 0; bit < 64; ++bit) {
    const uint64_t v = uint64_t{1} << bit;
    EXPECT_EQ(varint_size(v), enc(v).size()) << bit;
    EXPECT_EQ(varint_size(v - 1), enc(v - 1).size()) << bit;
  }
}

TEST(Varint, Zigzag) {
  EXPECT_EQ(zigzag(0), 0u);
  EXPECT_EQ(zigzag(-1), 1u);
  EXPECT_EQ(zigzag(1), 2u);
  EXPECT_EQ(zigzag(-2), 3u);
  EXPECT_EQ(zigzag(INT64_MIN), ~uint64_t{0});
  EXPECT_EQ(zigzag(INT64_MAX), ~uint64_t{0} - 1);
  for (int64_t v : {int64_t{0}, int64_t{-5}, int64_t{12345}, INT64_MIN, INT64_MAX})
    EXPECT_EQ(unzigzag(zigzag(v)), v);
}

TEST(Varint, FixedWidthLittleEndian) {
  uint8_t b[8];
  put_u32(b, 0x11223344);
  EXPECT_EQ(b[0], 0x44);
  EXPECT_EQ(b[3], 0x11);
  EXPECT_EQ(get_u32(b), 0x11223344u);
  put_u64(b, 0x0102030405060708ull);
  EXPECT_EQ(b[0], 0x08);
  EXPECT_EQ(get_u64(b), 0x0102030405060708ull);
  put_u16(b, 0xbeef);
  EXPECT_EQ(get_u16(b), 0xbeef);
}

TEST(Varint, StringsAreCut) {
  uint8_t buf[16];
  const uint8_t* end = put_string(buf, "abcdefgh", 8, 5);
  EXPECT_EQ(end - buf, 6);
  EXPECT_EQ(buf[0], 5);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf + 1), 5), "abcde");
}

}  // namespace
}  // namespace memloupe::format
