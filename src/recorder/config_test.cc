#include "recorder/config.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "format/signal_names.h"

namespace memloupe::recorder {
namespace {

TEST(ParseSizeTest, AcceptsBinaryUnits) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("512KiB"), 512u * 1024);
  EXPECT_EQ(parse_size("512k"), 512u * 1024);
  EXPECT_EQ(parse_size("512KB"), 512u * 1024);
  EXPECT_EQ(parse_size("2MiB"), 2u << 20);
  EXPECT_EQ(parse_size("2M"), 2u << 20);
  EXPECT_EQ(parse_size("1GiB"), uint64_t{1} << 30);
  EXPECT_EQ(parse_size("1TiB"), uint64_t{1} << 40);  // the largest MEMLOUPE_EVERY
}

TEST(ParseSizeTest, RejectsGarbage) {
  EXPECT_FALSE(parse_size(""));
  EXPECT_FALSE(parse_size("KiB"));
  EXPECT_FALSE(parse_size("12 KiB"));
  EXPECT_FALSE(parse_size("12XiB"));
  EXPECT_FALSE(parse_size("12KiBs"));
  EXPECT_FALSE(parse_size("-5"));
  EXPECT_FALSE(parse_size("99999999999999999999"));
  EXPECT_FALSE(parse_size("99999999999999G"));  // overflows 64 bits
}

TEST(ExpandOutputPathTest, ReplacesPidAndPercent) {
  char out[64];
  ASSERT_TRUE(expand_output_path("/tmp/t.%p.trace", 4242, out, sizeof(out)));
  EXPECT_STREQ(out, "/tmp/t.4242.trace");
  ASSERT_TRUE(expand_output_path("100%%-%p-%x", 7, out, sizeof(out)));
  EXPECT_STREQ(out, "100%-7-%x");
  EXPECT_FALSE(expand_output_path("/a/very/long/path/%p", 123456, out, 16));
}

std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  const auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

TEST(ReadConfigTest, DefaultsWhenUnset) {
  g_env.clear();
  const Config c = read_config(fake_getenv);
  EXPECT_FALSE(c.enabled());
  EXPECT_EQ(c.mode, format::Mode::Sampled);
  EXPECT_EQ(c.every, kDefaultEvery);
  EXPECT_EQ(c.depth, kDefaultDepth);
  EXPECT_EQ(c.flush_ms, kDefaultFlushMs);
  EXPECT_FALSE(c.follow_fork);
  EXPECT_FALSE(c.seed);
  EXPECT_EQ(c.zstd_level, ChunkCompressor::kAuto);
}

TEST(ReadConfigTest, ZstdLevel) {
  g_env = {{"MEMLOUPE_ZSTD_LEVEL", "0"}};
  EXPECT_EQ(read_config(fake_getenv).zstd_level, 0);
  g_env = {{"MEMLOUPE_ZSTD_LEVEL", "19"}};
  EXPECT_EQ(read_config(fake_getenv).zstd_level, 19);
  g_env = {{"MEMLOUPE_ZSTD_LEVEL", "auto"}};
  EXPECT_EQ(read_config(fake_getenv).zstd_level, ChunkCompressor::kAuto);
  g_env = {{"MEMLOUPE_ZSTD_LEVEL", "20"}};
  testing::internal::CaptureStderr();
  EXPECT_EQ(read_config(fake_getenv).zstd_level, ChunkCompressor::kAuto);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("MEMLOUPE_ZSTD_LEVEL='20'"), std::string::npos);
}

// The time unit: powers of two only (the encoder shifts); by default 1 µs
// sampled and kDefaultAllTimeUnitUs with every call.
TEST(ReadConfigTest, TimeUnit) {
  g_env = {};
  EXPECT_EQ(read_config(fake_getenv).time_unit(), 1u);
  g_env = {{"MEMLOUPE_MODE", "all"}};
  EXPECT_EQ(read_config(fake_getenv).time_unit(), kDefaultAllTimeUnitUs);
  g_env = {{"MEMLOUPE_MODE", "all"}, {"MEMLOUPE_TIME_UNIT", "1"}};
  EXPECT_EQ(read_config(fake_getenv).time_unit(), 1u);
  g_env = {{"MEMLOUPE_TIME_UNIT", "64"}};
  EXPECT_EQ(read_config(fake_getenv).time_unit(), 64u);
  for (const char* bad : {"0", "12", "2097152", "16us"}) {
    g_env = {{"MEMLOUPE_MODE", "all"}, {"MEMLOUPE_TIME_UNIT", bad}};
    testing::internal::CaptureStderr();
    EXPECT_EQ(read_config(fake_getenv).time_unit(), kDefaultAllTimeUnitUs) << bad;
    EXPECT_NE(testing::internal::GetCapturedStderr().find("MEMLOUPE_TIME_UNIT='" + std::string(bad) + "'"),
              std::string::npos);
  }
}

TEST(ReadConfigTest, ReadsEveryVariable) {
  g_env = {{"MEMLOUPE_OUTPUT", "/x/%p.trace"}, {"MEMLOUPE_MODE", "all"},
           {"MEMLOUPE_EVERY", "2MiB"},         {"MEMLOUPE_DEPTH", "16"},
           {"MEMLOUPE_FLUSH_MS", "250"},       {"MEMLOUPE_FOLLOW_FORK", "1"},
           {"MEMLOUPE_START_PAUSED", "1"},     {"MEMLOUPE_SEED", "99"}};
  const Config c = read_config(fake_getenv);
  EXPECT_STREQ(c.output, "/x/%p.trace");
  EXPECT_EQ(c.mode, format::Mode::All);
  EXPECT_EQ(c.every, 2u << 20);
  EXPECT_EQ(c.depth, 16u);
  EXPECT_EQ(c.flush_ms, 250u);
  EXPECT_TRUE(c.follow_fork);
  EXPECT_TRUE(c.start_paused);
  EXPECT_EQ(c.seed, 99u);
}

TEST(ReadConfigTest, BadValuesWarnOnceEachAndKeepDefaults) {
  g_env = {{"MEMLOUPE_OUTPUT", "t"},    {"MEMLOUPE_MODE", "most"}, {"MEMLOUPE_EVERY", "0"},
           {"MEMLOUPE_DEPTH", "9000"}, {"MEMLOUPE_FOLLOW_FORK", "yes"}};
  testing::internal::CaptureStderr();
  const Config c = read_config(fake_getenv);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(c.mode, format::Mode::Sampled);
  EXPECT_EQ(c.every, kDefaultEvery);
  EXPECT_EQ(c.depth, kDefaultDepth);
  EXPECT_FALSE(c.follow_fork);
  EXPECT_NE(err.find("memloupe: ignoring MEMLOUPE_MODE='most'"), std::string::npos) << err;
  EXPECT_NE(err.find("MEMLOUPE_EVERY='0'"), std::string::npos) << err;
  EXPECT_NE(err.find("MEMLOUPE_DEPTH='9000'"), std::string::npos) << err;
  EXPECT_NE(err.find("MEMLOUPE_FOLLOW_FORK='yes'"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 4) << err;
}

TEST(ReadConfigTest, SnapshotVariables) {
  const auto c = read_config([](const char* name) -> const char* {
    if (std::string_view(name) == "MEMLOUPE_SNAPSHOT_SIGNAL") return "SIGUSR2";
    if (std::string_view(name) == "MEMLOUPE_SNAPSHOT_AT_EXIT") return "0";
    return nullptr;
  });
  EXPECT_EQ(c.snapshot_signal, 12);
  EXPECT_FALSE(c.snapshot_at_exit);
  EXPECT_TRUE(Config{}.snapshot_at_exit);
  EXPECT_EQ(Config{}.snapshot_signal, 0);
}

TEST(ParseSignalTest, NamesNumbersAndRefusals) {
  EXPECT_EQ(format::parse_signal("USR2"), 12);
  EXPECT_EQ(format::parse_signal("SIGUSR1"), 10);
  EXPECT_EQ(format::parse_signal("34"), 34);
  EXPECT_EQ(format::parse_signal("KILL"), std::nullopt);
  EXPECT_EQ(format::parse_signal("9"), std::nullopt);
  EXPECT_EQ(format::parse_signal("11"), std::nullopt);
  EXPECT_EQ(format::parse_signal("65"), std::nullopt);
  EXPECT_EQ(format::parse_signal(""), std::nullopt);
  EXPECT_EQ(format::parse_signal("USR3"), std::nullopt);
}

}  // namespace
}  // namespace memloupe::recorder
