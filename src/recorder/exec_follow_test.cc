#include "recorder/exec_follow.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

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

// What exec_environment passes on, as strings.
std::vector<std::string> passed_on(const Config& c, uint32_t session_pid, std::vector<std::string> env) {
  std::vector<char*> envp;
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<char*> room(exec_environment_room(envp.data()));
  char entry[kSessionEntry];
  std::vector<std::string> out;
  char* const* passed = exec_environment(c, session_pid, envp.data(), room.data(), entry);
  for (char* const* e = passed; *e != nullptr; ++e) out.emplace_back(*e);
  return out;
}

TEST(ExecFollowTest, AnExecCarriesTheSessionWhateverEnvironmentTheProgramKept) {
  const Config c = with(false, std::nullopt);
  // bash's: the variable as memloupe run started it, empty.
  EXPECT_EQ(passed_on(c, 100, {"A=1", "MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID=", "B=2"}),
            (std::vector<std::string>{"A=1", "MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID=100", "B=2"}));
  // A bare LD_PRELOAD: none at all; and a second one, which getenv would not find, dropped.
  EXPECT_EQ(passed_on(c, 100, {"MEMLOUPE_OUTPUT=t"}),
            (std::vector<std::string>{"MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID=100"}));
  EXPECT_EQ(passed_on(c, 100, {"MEMLOUPE_SESSION_PID=100", "MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID=7"}),
            (std::vector<std::string>{"MEMLOUPE_SESSION_PID=100", "MEMLOUPE_OUTPUT=t"}));
  // An image that does not record passes on the session it was given.
  EXPECT_EQ(passed_on(with(false, 42), 0, {"MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID="}),
            (std::vector<std::string>{"MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID=42"}));
}

TEST(ExecFollowTest, AnEnvironmentThatFollowsTheRuleIsPassedOnAsItIs) {
  std::string a = "MEMLOUPE_OUTPUT=t", b = "MEMLOUPE_SESSION_PID=100";
  char* envp[] = {a.data(), b.data(), nullptr};
  char* room[4];
  char entry[kSessionEntry];
  EXPECT_EQ(exec_environment(with(false, std::nullopt), 100, envp, room, entry), envp);
  // Without the output (env -i), under follow-fork, and with no session known.
  char* bare[] = {b.data(), nullptr};
  EXPECT_EQ(exec_environment(with(false, std::nullopt), 200, bare, room, entry), bare);
  EXPECT_EQ(exec_environment(with(true, std::nullopt), 200, envp, room, entry), envp);
  EXPECT_EQ(exec_environment(with(false, std::nullopt), 0, envp, room, entry), envp);
}

TEST(ExecFollowTest, WithoutFollowExecTheOutputIsDropped) {
  Config c = with(false, std::nullopt);
  c.follow_exec = false;
  EXPECT_EQ(passed_on(c, 100, {"A=1", "MEMLOUPE_OUTPUT=t", "MEMLOUPE_SESSION_PID="}),
            (std::vector<std::string>{"A=1", "MEMLOUPE_SESSION_PID="}));
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
