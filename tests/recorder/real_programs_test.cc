// Real programs under the recorder, output unchanged: python3, git, perl.
#include <fstream>

#include "fixture.h"

namespace memloupe::recorder_test {
namespace {

using format::EndReason;

class RealProgramsTest : public PreloadTest {
 protected:
  static bool installed(const std::string& path) { return fs::exists(path); }
  // Plenty of allocation calls were counted and some were sampled.
  void expect_busy_trace(const TraceData& t, uint64_t min_mallocs) {
    EXPECT_GE(t.total(format::Func::Malloc).calls, min_mallocs);
    EXPECT_FALSE(t.allocs.empty());
    EXPECT_FALSE(t.modules_loaded.empty());
  }
};

constexpr const char* kPythonScript = R"(
import collections, json
d = {str(i): [j * j for j in range(i % 50)] for i in range(20000)}
c = collections.Counter(len(v) for v in d.values())
print(json.dumps(sorted(c.items())[:5]), sum(map(len, d.values())))
)";

TEST_F(RealProgramsTest, Python) {
  if (!installed("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  for (const char* mode : {"sampled", "all"}) {
    SCOPED_TRACE(mode);
    const std::string out = (dir_ / (std::string("py.") + mode)).string();
    const RunResult r = run_both({"/usr/bin/python3", "-c", kPythonScript},
                                 {"MEMLOUPE_OUTPUT=" + out, std::string("MEMLOUPE_MODE=") + mode,
                                  "MEMLOUPE_EVERY=64KiB"});
    EXPECT_EQ(r.out, "[[0, 400], [1, 400], [2, 400], [3, 400], [4, 400]] 490000\n");
    expect_busy_trace(complete_trace(out, EndReason::Exit), 1000);  // small objects: pymalloc
  }
}

TEST_F(RealProgramsTest, GitOnALocalRepository) {
  if (!installed("/usr/bin/git")) GTEST_SKIP() << "no /usr/bin/git";
  const fs::path repo = dir_ / "repo";
  fs::create_directories(repo);
  const std::string git_env = "cd '" + repo.string() +
                              "' && export HOME='" + dir_.path().string() +
                              "' GIT_CONFIG_NOSYSTEM=1 && ";
  const RunResult setup = run({"/bin/sh", "-c",
                               git_env + "git init -q && git config user.name t && git config user.email t@t "
                               "&& for i in 1 2 3; do seq 1 $((i * 500)) > f$i.txt; git add f$i.txt; "
                               "git commit -qm \"commit $i\"; done"});
  ASSERT_TRUE(setup.exited(0)) << setup.describe();
  const std::vector<std::string> env = {"HOME=" + dir_.path().string(), "GIT_CONFIG_NOSYSTEM=1",
                                        "MEMLOUPE_MODE=all"};
  const RunResult r = run_both({"/usr/bin/git", "log", "--stat", "--format=%s"}, env, "", repo);
  EXPECT_NE(r.out.find("commit 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f2.txt | 1000 +"), std::string::npos) << r.out;
  expect_busy_trace(complete_trace(trace_path(), EndReason::Exit), 100);
}

TEST_F(RealProgramsTest, Perl) {
  if (!installed("/usr/bin/perl")) GTEST_SKIP() << "no /usr/bin/perl";
  const RunResult r = run_both(
      {"/usr/bin/perl", "-e",
       "my %h; $h{$_ % 997} .= 'x' x ($_ % 13) for 1..200000; "
       "my $t = 0; $t += length($h{$_}) for keys %h; print scalar(keys %h), \" $t\\n\";"},
      {"MEMLOUPE_EVERY=64KiB"});
  EXPECT_EQ(r.out, "997 1199988\n");
  expect_busy_trace(complete_trace(trace_path(), EndReason::Exit), 1000);
}

}  // namespace
}  // namespace memloupe::recorder_test
