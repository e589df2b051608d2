#include "recorder/exec_follow.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace memloupe::recorder {
namespace {

Config with(bool follow_fork, std::optional<uint64_t> session_pid) {
  Config c;
  c.follow_fork = follow_fork;
  c.session_pid = session_pid;
  return c;
}

TEST(ExecFollowTest, TheLaunchedImageRecordsAndItsExecsContinueIntoNewFiles) {
  EXPECT_EQ(image_role(with(false, std::nullopt), 100), ImageRole::First);
  EXPECT_EQ(image_role(with(false, 100), 100), ImageRole::ExecOfTraced);
}

TEST(ExecFollowTest, DescendantsThroughAnUnfollowedForkPassThrough) {
  EXPECT_EQ(image_role(with(false, 100), 101), ImageRole::Untraced);
}

TEST(ExecFollowTest, FollowingForksEveryImageRecordsWithoutOverwriting) {
  EXPECT_EQ(image_role(with(true, std::nullopt), 100), ImageRole::ExecOfTraced);
  EXPECT_EQ(image_role(with(true, 100), 101), ImageRole::ExecOfTraced);
}

TEST(ExecFollowTest, ConfigReadsTheVariables) {
  static std::map<std::string, std::string> env;
  env = {{"MEMLOUPE_FOLLOW_EXEC", "0"}, {"MEMLOUPE_SESSION_PID", "4242"}};
  const Config c = read_config([](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
  EXPECT_FALSE(c.follow_exec);
  EXPECT_EQ(c.session_pid, 4242u);
  EXPECT_TRUE(Config{}.follow_exec);
}

}  // namespace
}  // namespace memloupe::recorder
