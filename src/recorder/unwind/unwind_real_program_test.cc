// The fast unwinder on real Debian programs (no frame pointers in libc, libpython,
// libsqlite3, git): a preloaded shim compares it with libunwind inside malloc.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

#ifdef MEMLOUPE_UNWIND_CHECK_SHIM

struct CheckResult {
  unsigned long compared = 0, fallbacks = 0, mismatches = 0;
  std::string detail;
};

// Runs argv with the shim preloaded; returns the shim's report.
CheckResult run_checked(std::vector<std::string> argv, const std::string& stdin_path = "") {
  std::string out_path = testing::TempDir() + "memloupe_unwind_check_XXXXXX";
  char* out_template = out_path.data();
  const int fd = mkstemp(out_template);
  EXPECT_GE(fd, 0);
  close(fd);
  std::vector<std::string> env_strings = {
      std::string("LD_PRELOAD=") + MEMLOUPE_UNWIND_CHECK_SHIM,
      std::string("MEMLOUPE_UNWIND_CHECK_OUT=") + out_template,
  };
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("LD_PRELOAD=", 0) != 0) env_strings.emplace_back(*e);
  }
  std::vector<char*> envp, args;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  for (std::string& s : argv) args.push_back(s.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  if (!stdin_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 0, stdin_path.c_str(), O_RDONLY, 0);
  }
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  CheckResult r;
  if (rc != 0) {
    ADD_FAILURE() << "cannot run " << argv[0];
    return r;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << argv[0] << " status " << status;
  std::ifstream in(out_template);
  std::string first;
  std::getline(in, first);
  // One line per process (git may run children); sum them.
  do {
    unsigned long c = 0, f = 0, m = 0;
    if (std::sscanf(first.c_str(), "%lu %lu %lu", &c, &f, &m) == 3) {
      r.compared += c;
      r.fallbacks += f;
      r.mismatches += m;
    } else {
      r.detail += first + "\n";
    }
  } while (std::getline(in, first));
  unlink(out_template);
  return r;
}

void expect_agreement(const CheckResult& r, unsigned long min_compared) {
  EXPECT_GE(r.compared, min_compared);
  EXPECT_EQ(r.mismatches, 0u) << r.detail;
  // Stacks handed to libunwind: rare frames the fast path cannot hold.
  EXPECT_LE(r.fallbacks * 100, r.compared) << r.fallbacks << " of " << r.compared;
  std::printf("compared %lu stacks, %lu fell back to libunwind, %lu mismatches\n", r.compared,
              r.fallbacks, r.mismatches);
}

bool exists(const char* path) { return access(path, X_OK) == 0; }

TEST(UnwindRealProgram, Python) {
  if (!exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  expect_agreement(run_checked({"/usr/bin/python3", "-c",
                                "import json, re, collections\n"
                                "d = [{'k': i, 'v': str(i) * 3} for i in range(20000)]\n"
                                "s = json.dumps(d); json.loads(s)\n"
                                "collections.Counter(re.findall(r'\\d+', s)).most_common(5)\n"}),
                   1000);
}

TEST(UnwindRealProgram, Sqlite) {
  if (!exists("/usr/bin/sqlite3")) GTEST_SKIP() << "no /usr/bin/sqlite3";
  const std::string sql = std::string(MEMLOUPE_SOURCE_DIR) + "/bench/workloads/sqlite_workload.sql";
  if (access(sql.c_str(), R_OK) != 0) GTEST_SKIP() << "no " << sql;
  // The benchmark's workload at a tenth of its size.
  expect_agreement(run_checked({"/usr/bin/sqlite3", "-cmd",
                                "CREATE TABLE params(rows INTEGER); INSERT INTO params VALUES (12000)",
                                ":memory:"},
                               sql),
                   1000);
}

TEST(UnwindRealProgram, Git) {
  if (!exists("/usr/bin/git")) GTEST_SKIP() << "no /usr/bin/git";
  expect_agreement(run_checked({"/usr/bin/git", "-C", MEMLOUPE_SOURCE_DIR, "log", "--stat",
                                "-n", "20"}),
                   100);
}

#else

TEST(UnwindRealProgram, NeedsAnUninstrumentedShim) {
  GTEST_SKIP() << "sanitizer build: the check shim cannot be preloaded into programs";
}

#endif
}  // namespace
