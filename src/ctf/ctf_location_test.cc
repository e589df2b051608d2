#include "ctf/ctf_location.h"

#include <gtest/gtest.h>

#include <random>

#include "support/ctf_test_support.h"

namespace memloupe::reader::ctf {
namespace {

std::vector<Location> decode_all(const Out& out, LocationDecoder& d, uint64_t& code) {
  std::vector<Location> locs;
  Cursor in(out.bytes(), 0, out.size());
  d.decode(in, code, locs);
  EXPECT_FALSE(in.failed()) << in.error().message;
  EXPECT_TRUE(in.at_end());
  return locs;
}

TEST(CtfLocation, DecodesTheSampleTracesSecondLocation) {
  // The first location event with frames in viewer_test.ctf: its body spans file
  // offsets 0x190..0x224 (bytes checked by hand against a hex dump).
  const std::vector<uint8_t> file = testing::read_file(testing::viewer_trace_path());
  ASSERT_EQ(file.size(), 2390u);
  LocationDecoder d;
  Cursor in(file, 0x190, 0x224);
  uint64_t code = 0;
  std::vector<Location> locs;
  d.decode(in, code, locs);
  ASSERT_FALSE(in.failed()) << in.error().message;
  EXPECT_TRUE(in.at_end());
  EXPECT_EQ(code, 0x40cb64u);
  ASSERT_EQ(locs.size(), 2u);
  // Outermost first: the module's top level (line 96) into which main is inlined.
  EXPECT_EQ(locs[0], (Location{"generate_test_data.ml", 96, 2, 16,
                               "Bin_prefix_generate_test_data__Generate_test_data"}));
  // Same file (MTF code 0), new defname.
  EXPECT_EQ(locs[1], (Location{"generate_test_data.ml", 86, 2, 7,
                               "Bin_prefix_generate_test_data__Generate_test_data.main"}));
}

TEST(CtfLocation, MoveToFrontListsRoundTripWithEvictions) {
  std::mt19937 rng(7);
  auto below = [&](uint32_t n) { return static_cast<uint32_t>(rng() % n); };
  LocationEncoder e;
  LocationDecoder d;
  Out out;
  std::vector<std::pair<uint64_t, std::vector<Location>>> written;
  for (uint64_t code = 0; code < 3000; ++code) {
    std::vector<Location> locs;
    for (unsigned k = rng() % 4; k > 0; --k) {
      // 45 files and 40 functions per file: more than the 31 entries of either list.
      unsigned file = below(45);
      locs.push_back(Location{"file" + std::to_string(file) + ".c", below(5000), below(200),
                              below(1000), "f" + std::to_string(file) + "_" + std::to_string(below(40))});
    }
    e.encode(code, locs, out);
    written.emplace_back(code, std::move(locs));
  }
  Cursor in(out.bytes(), 0, out.size());
  for (const auto& [code, locs] : written) {
    uint64_t got_code = ~0ull;
    std::vector<Location> got;
    d.decode(in, got_code, got);
    ASSERT_FALSE(in.failed()) << in.error().message;
    ASSERT_EQ(got_code, code);
    ASSERT_EQ(got, locs) << "code " << code;
  }
  EXPECT_TRUE(in.at_end());
}

TEST(CtfLocation, RepeatsCostSixBytesPerFrame) {
  LocationEncoder e;
  Out first, second;
  std::vector<Location> locs{{"a.c", 1, 2, 3, "f"}, {"a.c", 4, 5, 6, "g"}};
  e.encode(1, locs, first);
  e.encode(2, locs, second);
  EXPECT_EQ(first.size(), 8 + 1 + 6 + 4 + 2 + 6 + 2u);  // strings once each
  EXPECT_EQ(second.size(), 8 + 1 + 2 * 6u);             // all MTF hits
}

TEST(CtfLocation, ClampsFieldsAndCutsStringsAtNul) {
  LocationEncoder e;
  LocationDecoder d;
  Out out;
  std::vector<Location> locs{{std::string("x.c\0junk", 8), 5000000, 300, 5000, "fn"}};
  e.encode(9, locs, out);
  uint64_t code = 0;
  EXPECT_EQ(decode_all(out, d, code), (std::vector<Location>{{"x.c", 0xFFFFF, 0xFF, 0x3FF, "fn"}}));
}

TEST(CtfLocation, UnrepresentableListsBecomeUnknown) {
  LocationEncoder e;
  LocationDecoder d;
  const std::vector<Location> unknown{{"<unknown>", 1, 1, 1, "??"}};
  Out out;
  uint64_t code = 0;
  e.encode(1, std::vector<Location>(256, Location{"a.c", 1, 1, 1, "f"}), out);  // > 255 frames
  EXPECT_EQ(decode_all(out, d, code), unknown);
  out.clear();
  e.encode(2, std::vector<Location>{{std::string(5000, 'x'), 1, 1, 1, "f"}}, out);  // > 4 KiB
  EXPECT_EQ(decode_all(out, d, code), unknown);
  out.clear();
  e.encode(3, {}, out);  // an empty list stays empty
  EXPECT_EQ(decode_all(out, d, code), std::vector<Location>{});
}

// One location list of one entry whose 48-bit word is `word`, its strings to
// follow (the caller appends them).
Out one_location(uint64_t word) {
  Out out;
  out.u64(1);
  out.u8(1);
  out.u32(static_cast<uint32_t>(word));
  out.u16(static_cast<uint16_t>(word >> 32));
  return out;
}

// The cursor after a fresh decoder's decode of `out`.
Cursor decoded(const Out& out) {
  LocationDecoder d;
  Cursor in(out.bytes(), 0, out.size());
  uint64_t code = 0;
  std::vector<Location> locs;
  d.decode(in, code, locs);
  return in;
}

TEST(CtfLocation, CodeNamingAnEmptySlotIsAnError) {
  Out out = one_location(uint64_t{3} << 38 | uint64_t{31} << 43);  // file code 3: empty list
  out.str("f");
  const Cursor in = decoded(out);
  ASSERT_TRUE(in.failed());
  EXPECT_EQ(in.error().offset, 9u);
  EXPECT_NE(in.error().message.find("file code 3"), std::string::npos) << in.error().message;
}

TEST(CtfLocation, MissingNulIsAnError) {
  Out out = one_location(uint64_t{31} << 38 | uint64_t{31} << 43);
  out.u8('a');  // the file name never ends
  const Cursor in = decoded(out);
  ASSERT_TRUE(in.failed());
  EXPECT_EQ(in.error().offset, 15u);
  EXPECT_NE(in.error().message.find("NUL"), std::string::npos);
}

}  // namespace
}  // namespace memloupe::reader::ctf
