#include "symbolize/module_map.h"

#include <gtest/gtest.h>

namespace memloupe::symbolize {
namespace {

format::ModuleLoad load(uint64_t start, uint64_t end, std::string_view path) {
  return {.time_ns = 0, .start = start, .end = end, .load_bias = start, .path = path, .build_id = {}};
}

std::string path_at(const ModuleMap& map, uint64_t address) {
  auto m = map.find(address);
  return m ? map[*m].path : "-";
}

TEST(ModuleMap, FindsTheModuleCoveringAnAddress) {
  ModuleMap map;
  map.load(load(0x1000, 0x2000, "a"));
  map.load(load(0x3000, 0x4000, "b"));
  EXPECT_EQ(path_at(map, 0x0fff), "-");
  EXPECT_EQ(path_at(map, 0x1000), "a");
  EXPECT_EQ(path_at(map, 0x1fff), "a");
  EXPECT_EQ(path_at(map, 0x2000), "-");
  EXPECT_EQ(path_at(map, 0x3800), "b");
  EXPECT_EQ(path_at(map, 0x4000), "-");
}

TEST(ModuleMap, ARangeReusedAfterUnloadNamesTheNewModule) {
  ModuleMap map;
  map.load(load(0x1000, 0x2000, "old"));
  const auto first = map.find(0x1800);
  map.unload(0x1000);
  EXPECT_EQ(path_at(map, 0x1800), "-");
  map.load(load(0x1000, 0x3000, "new"));
  EXPECT_EQ(path_at(map, 0x1800), "new");
  // Loads are kept forever, so what was found earlier still names "old".
  ASSERT_TRUE(first);
  EXPECT_EQ(map[*first].path, "old");
  EXPECT_EQ(map.modules().size(), 2u);
}

TEST(ModuleMap, ALoadOverAMappedRangeReplacesWhatItOverlaps) {
  ModuleMap map;
  map.load(load(0x1000, 0x2000, "a"));
  map.load(load(0x2000, 0x3000, "b"));
  map.load(load(0x4000, 0x5000, "c"));
  map.load(load(0x1800, 0x2800, "d"));  // no unload for a and b was seen
  EXPECT_EQ(path_at(map, 0x1000), "-");
  EXPECT_EQ(path_at(map, 0x1900), "d");
  EXPECT_EQ(path_at(map, 0x2900), "-");
  EXPECT_EQ(path_at(map, 0x4000), "c");
}

TEST(ModuleMap, FindAnyTimePrefersTheLatestLoad) {
  ModuleMap map;
  map.load(load(0x1000, 0x2000, "early"));
  map.unload(0x1000);
  EXPECT_FALSE(map.find(0x1500));
  ASSERT_TRUE(map.find_any_time(0x1500));
  EXPECT_EQ(map[*map.find_any_time(0x1500)].path, "early");
  map.load(load(0x1000, 0x2000, "late"));
  map.unload(0x1000);
  EXPECT_EQ(map[*map.find_any_time(0x1500)].path, "late");
  EXPECT_FALSE(map.find_any_time(0x2000));
}

TEST(ModuleMap, EmptyRangesAreIgnored) {
  ModuleMap map;
  map.load(load(0x1000, 0x1000, "empty"));
  EXPECT_TRUE(map.modules().empty());
  EXPECT_FALSE(map.find_any_time(0x1000));
}

}  // namespace
}  // namespace memloupe::symbolize
