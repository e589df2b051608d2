#include "recorder/unwind/proc_maps.h"

#include <gtest/gtest.h>

#include <cstring>

namespace memloupe::recorder::unwind_detail {
namespace {

bool parse(const char* line, Mapping& m) { return parse_maps_line(line, std::strlen(line), m); }

TEST(ProcMaps, ParsesStackLine) {
  Mapping m;
  ASSERT_TRUE(parse("7ffd3c5a1000-7ffd3c5c2000 rw-p 00000000 00:00 0                          [stack]", m));
  EXPECT_EQ(m.begin, 0x7ffd3c5a1000u);
  EXPECT_EQ(m.end, 0x7ffd3c5c2000u);
  EXPECT_TRUE(m.readable);
  EXPECT_TRUE(m.writable);
  EXPECT_TRUE(m.stack_like);
}

TEST(ProcMaps, ClassifiesOtherMappings) {
  Mapping m;
  ASSERT_TRUE(parse("7f1200028000-7f120017d000 r-xp 00028000 fe:01 1835073   /usr/lib/x86_64-linux-gnu/libc.so.6", m));
  EXPECT_TRUE(m.readable);
  EXPECT_FALSE(m.writable);
  EXPECT_FALSE(m.stack_like);
  ASSERT_TRUE(parse("7f11ff7ff000-7f11fffff000 rw-p 00000000 00:00 0 ", m));  // a thread stack
  EXPECT_TRUE(m.stack_like);
  ASSERT_TRUE(parse("7f11ff7fe000-7f11ff7ff000 ---p 00000000 00:00 0", m));  // its guard
  EXPECT_FALSE(m.readable);
  ASSERT_TRUE(parse("7ffd3c5f0000-7ffd3c5f4000 r--p 00000000 00:00 0                          [vvar]", m));
  EXPECT_FALSE(m.stack_like);
  ASSERT_TRUE(parse("55d0c0a3b000-55d0c0a5c000 rw-p 00000000 00:00 0                          [heap]", m));
  EXPECT_FALSE(m.stack_like);
}

TEST(ProcMaps, RejectsMalformedLines) {
  Mapping m;
  EXPECT_FALSE(parse("", m));
  EXPECT_FALSE(parse("7ffd3c5a1000 rw-p 00000000 00:00 0", m));
  EXPECT_FALSE(parse("7ffd3c5a1000-7ffd3c5c2000 rw", m));
  EXPECT_FALSE(parse("2000-1000 rw-p 00000000 00:00 0", m));  // empty range
}

TEST(ProcMaps, FindsThisThreadsStack) {
  int local = 0;
  const auto addr = reinterpret_cast<uintptr_t>(&local);
  Mapping m;
  ASSERT_TRUE(find_mapping(addr, m));
  EXPECT_LE(m.begin, addr);
  EXPECT_GT(m.end, addr);
  EXPECT_TRUE(m.readable && m.writable && m.stack_like);
}

TEST(ProcMaps, FindsCodeAndMissesUnmappedAddresses) {
  Mapping m;
  ASSERT_TRUE(find_mapping(reinterpret_cast<uintptr_t>(&find_mapping), m));
  EXPECT_FALSE(m.writable);
  EXPECT_FALSE(m.stack_like);
  EXPECT_FALSE(find_mapping(0x1000, m));  // below vm.mmap_min_addr: never mapped
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
