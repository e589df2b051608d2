// memloupe as a user builds and installs it (cmake/install.cmake,
// cmake/optional_deps.cmake): an install into a temporary prefix that works from
// there (companions found, man page renders, completions answer), and a plain
// configure that needs neither -Werror nor the test and benchmark libraries.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "support/child_process.h"

namespace memloupe::test_support {
namespace {

using namespace std::chrono_literals;

struct Result {
  int status = -1;
  std::string out, err;
};

// Runs argv in `dir` with this process's environment minus memloupe's own
// variables (the companions must be found without MEMLOUPE_PRELOAD and friends).
Result run(const TempDir& dir, std::vector<std::string> argv, std::vector<std::string> extra_env = {}) {
  static int n = 0;
  const std::string tag = "cmd" + std::to_string(n++);
  std::vector<std::string> env;
  for (std::string& v : current_environment())
    if (!is_memloupe_setting(v)) env.push_back(std::move(v));
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  Child c(ChildSpec{std::move(argv), env, dir.path(), {}, dir / (tag + ".out"), dir / (tag + ".err")});
  const ChildExit e = c.wait(300s);
  return {WIFEXITED(e.wait_status) ? WEXITSTATUS(e.wait_status) : -1, read_file(dir / (tag + ".out")),
          read_file(dir / (tag + ".err"))};
}

class Installed : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    const Result r = run(*dir_, {MEMLOUPE_CMAKE_COMMAND, "--install", MEMLOUPE_BINARY_DIR, "--prefix",
                                 (dir_->path() / "prefix").string()});
    ASSERT_EQ(r.status, 0) << r.out << r.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static fs::path prefix() { return dir_->path() / "prefix"; }
  static TempDir* dir_;
};
TempDir* Installed::dir_ = nullptr;

TEST_F(Installed, LaysOutBinaryCompanionsHeaderManPageAndCompletions) {
  for (const char* file : {"bin/memloupe", "include/memloupe/memloupe.h", "share/man/man1/memloupe.1",
                           "share/bash-completion/completions/memloupe", "share/zsh/site-functions/_memloupe"})
    EXPECT_TRUE(fs::exists(prefix() / file)) << file;
  // The companions, in the one directory the CLI looks in beside bin/.
  int companions = 0;
  for (const auto& e : fs::recursive_directory_iterator(prefix() / "lib")) {
    const std::string name = e.path().filename().string();
    if (name == "libmemloupe_preload.so" || name == "libmemloupe_attach.so" || name == "memloupe-replayer") {
      EXPECT_EQ(e.path().parent_path().filename(), "memloupe") << e.path();
      ++companions;
    }
  }
  EXPECT_EQ(companions, 3);
}

TEST_F(Installed, RunsAProgramFromThePrefix) {
#ifdef MEMLOUPE_SANITIZED
  GTEST_SKIP() << "the sanitized preload library cannot be preloaded into /bin/sh";
#endif
  TempDir work;
  const Result r = run(work, {(prefix() / "bin/memloupe").string(), "run", "--every", "64", "-o", "t.trace", "--",
                              "/bin/sh", "-c", "echo hello from the installed memloupe"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "hello from the installed memloupe\n");
  const Result s = run(work, {(prefix() / "bin/memloupe").string(), "summary", "t.trace"});
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_NE(s.out.find("Command      /bin/sh"), std::string::npos) << s.out;
  // Some sh allocations were sampled at one sample per 64 bytes: the preload
  // library of the prefix was loaded.
  EXPECT_EQ(s.out.find("no sampled"), std::string::npos) << s.out;
}

TEST_F(Installed, ManPageRendersEveryCommand) {
  TempDir work;
  const Result r = run(work, {"/usr/bin/man", "--warnings", "-l", (prefix() / "share/man/man1/memloupe.1").string()},
                       {"MANWIDTH=100", "MANPAGER=cat", "PAGER=cat"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");  // no roff warnings
  EXPECT_NE(r.out.find("memloupe - a sampling memory profiler"), std::string::npos) << r.out;
  for (const char* cmd : {"run", "attach", "live", "summary", "report", "replay"}) {
    EXPECT_NE(r.out.find("Usage: memloupe " + std::string(cmd) + " [OPTIONS]"), std::string::npos) << cmd;
  }
  EXPECT_NE(r.out.find("--no-follow-exec"), std::string::npos);
}

TEST_F(Installed, BashCompletionAnswersFromTheBinary) {
  TempDir work;
  const std::string script =
      "source '" + (prefix() / "share/bash-completion/completions/memloupe").string() + "'\n" +
      "PATH='" + (prefix() / "bin").string() + "':$PATH\n"
      "c() { COMP_WORDS=(\"$@\"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _memloupe; printf '%s\\n' \"${COMPREPLY[@]}\" | sort; echo --; }\n"
      "c memloupe ru\nc memloupe su\nc memloupe run --no\nc memloupe top t.trace --b\n"
      "c memloupe run -- /bin/tru\ncomplete -p memloupe\n";
  const Result r = run(work, {"/bin/bash", "--norc", "-c", script});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "run\n--\nsummary\n--\n--no-follow-exec\n--no-symbolize\n--\n--between\n--blocks\n--by\n--\n"
            "/bin/true\n/bin/truncate\n--\ncomplete -o filenames -F _memloupe memloupe\n")
      << r.out;
}

TEST_F(Installed, ZshCompletionLoadsThroughCompinit) {
  if (access("/usr/bin/zsh", X_OK) != 0) GTEST_SKIP() << "zsh is not installed (scripts/install-deps.sh)";
  TempDir work;
  const std::string dir = (prefix() / "share/zsh/site-functions").string();
  const Result syntax = run(work, {"/usr/bin/zsh", "-n", dir + "/_memloupe"});
  EXPECT_EQ(syntax.status, 0) << syntax.err;
  const Result r = run(work, {"/usr/bin/zsh", "-f", "-c",
                              "fpath=('" + dir + "' $fpath); autoload -Uz compinit; compinit -u -d " +
                                  (work / "zcompdump").string() + "; print -r -- $_comps[memloupe]"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "_memloupe\n");
}

// A plain configure as a user runs it: no -Werror anywhere, and without
// GoogleTest and Google Benchmark the tests and benchmarks are skipped, saying so.
TEST(PlainBuild, ConfiguresWithoutWerrorOrTestLibraries) {
  TempDir dir;
  const Result r = run(dir, {MEMLOUPE_CMAKE_COMMAND, "-S", MEMLOUPE_SOURCE_DIR, "-B", (dir / "b").string(), "-G",
                             MEMLOUPE_CMAKE_GENERATOR, "-DCMAKE_BUILD_TYPE=Release",
                             "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON", "-DCMAKE_DISABLE_FIND_PACKAGE_benchmark=ON"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GoogleTest not found: the tests are skipped"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Google Benchmark not found: the benchmarks are skipped"), std::string::npos) << r.out;
  const std::string commands = read_file(dir / "b" / "compile_commands.json");
  ASSERT_NE(commands.find("memloupe"), std::string::npos);
  EXPECT_EQ(commands.find("-Werror"), std::string::npos);
  EXPECT_NE(commands.find("-Wall"), std::string::npos);
  // No test is registered, so a plain `ctest` there has nothing to fail on.
  EXPECT_FALSE(fs::exists(dir / "b" / "CTestTestfile.cmake"));
  // The developer and CI presets (this build) keep warnings as errors.
  EXPECT_NE(read_file(fs::path(MEMLOUPE_BINARY_DIR) / "compile_commands.json").find("-Werror"), std::string::npos);
}

}  // namespace
}  // namespace memloupe::test_support
