#include "report/text_format.h"

#include <gtest/gtest.h>

namespace memloupe::report {
namespace {

TEST(TextFormat, Bytes) {
  EXPECT_EQ(human_bytes(0), "0 B");
  EXPECT_EQ(human_bytes(1023), "1023 B");
  EXPECT_EQ(human_bytes(1536), "1.50 KiB");
  EXPECT_EQ(human_bytes(12.5 * 1024 * 1024), "12.5 MiB");
  EXPECT_EQ(human_bytes(300.0 * 1024 * 1024 * 1024), "300 GiB");
}

TEST(TextFormat, Counts) {
  EXPECT_EQ(human_count(0), "0");
  EXPECT_EQ(human_count(999), "999");
  EXPECT_EQ(human_count(1234567), "1,234,567");
  EXPECT_EQ(human_count(-1234), "-1,234");
  EXPECT_EQ(short_count(987), "987");
  EXPECT_EQ(short_count(12345), "12.3k");
  EXPECT_EQ(short_count(4560000), "4.56M");
}

TEST(TextFormat, Durations) {
  EXPECT_EQ(human_duration(850), "850 ns");
  EXPECT_EQ(human_duration(12'500), "12.5 µs");
  EXPECT_EQ(human_duration(1'230'000), "1.23 ms");
  EXPECT_EQ(human_duration(1'234'000'000), "1.234 s");
  EXPECT_EQ(human_duration(1'800'000'000'000), "30.0 min");
}

TEST(TextFormat, Estimates) {
  EXPECT_EQ(bytes_estimate({2048, 2048, 2048}, true), "2.00 KiB");
  // The interval is written in the value's unit.
  EXPECT_EQ(bytes_estimate({1.5 * 1048576, 1.25 * 1048576, 1.75 * 1048576}, false), "1.50 MiB [1.25, 1.75]");
  EXPECT_EQ(bytes_estimate({0, 0, 3000}, false), "0.00 KiB [0.00, 2.93]");
  EXPECT_EQ(bytes_estimate({100, 50, 200}, false), "100 B [50, 200]");
  EXPECT_EQ(count_estimate({1234, 1100, 1400}, false), "1.23k [1.10k, 1.40k]");
  EXPECT_EQ(count_estimate({1234, 1234, 1234}, true), "1,234");
  EXPECT_EQ(count_estimate({0, 0, 0, /*bounded=*/false}, false), "0 [0, ?]");
  EXPECT_EQ(human_percent(1, 8), "12.5%");
  EXPECT_EQ(human_percent(1, 0), "-");
}

TEST(TextFormat, DisplayWidth) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("12 µs ±"), 7u);
  EXPECT_EQ(truncate_display("abcdef", 4), "abc…");
  EXPECT_EQ(truncate_display("abc", 4), "abc");
  EXPECT_EQ(truncate_display("µµµµµ", 3), "µµ…");
}

}  // namespace
}  // namespace memloupe::report
