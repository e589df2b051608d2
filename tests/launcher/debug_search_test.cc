// The search for separate debug files without a debuginfod server configured
// (symbolize/debug_search.h): libdebuginfod is not loaded for a module that
// has none, the names found are libdw's own, and it is loaded as before when
// DEBUGINFOD_URLS names a server.
#include "symbolize/debug_search.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sites.h"
#include "support/child_process.h"
#include "symbolize/elf_file.h"
#include "symbolize/loaded_modules.h"

namespace memloupe::symbolize {
namespace {

namespace fs = std::filesystem;

bool debuginfod_loaded() {
  void* handle = dlopen("libdebuginfod.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

// What a child symbolising without debug info tells (its exit code).
enum Outcome : int {
  kNotLoaded = 10,
  kLoaded = 11,
  kLoadedBefore = 12,  // by an earlier test in this process: nothing to tell
  kNoLibrary = 13,     // libdebuginfod is not installed
  kWrongFrames = 14,
  kNoModule = 15,
};

// Symbolises c_allocate in this program's copy without DWARF (objcopy
// --strip-debug at build time, beside it: no separate debug file anywhere),
// in a child process with DEBUGINFOD_URLS = `urls` (unset if null).
int symbolise_without_debug_info(const char* urls, const std::string& cache) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (debuginfod_loaded()) _exit(kLoadedBefore);
    if (urls == nullptr) {
      unsetenv("DEBUGINFOD_URLS");
    } else {
      setenv("DEBUGINFOD_URLS", urls, 1);
      setenv("DEBUGINFOD_CACHE_PATH", cache.c_str(), 1);
      setenv("DEBUGINFOD_TIMEOUT", "2", 1);
    }
    const auto module = loaded_module_at(reinterpret_cast<uint64_t>(&memloupe_testprog::c_allocate));
    if (!module) _exit(kNoModule);
    auto file = ElfFile::open(module->path + ".nodebug", {}, "/nonexistent");
    if (!file) _exit(kNoModule);
    const auto frames = (*file)->frames(
        std::vector<uint64_t>{reinterpret_cast<uint64_t>(&memloupe_testprog::c_allocate) - module->load_bias + 1});
    if (frames.size() != 1 || frames[0].size() != 1 || frames[0][0].function != "c_allocate" ||
        !frames[0][0].file.empty()) {
      _exit(kWrongFrames);
    }
    if (debuginfod_loaded()) _exit(kLoaded);
    // Not loaded: by this libdw, or because it is not there?
    _exit(dlopen("libdebuginfod.so.1", RTLD_LAZY) != nullptr ? kNotLoaded : kNoLibrary);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

TEST(DebugSearch, NoServerConfiguredLoadsNoDebuginfod) {
  const int outcome = symbolise_without_debug_info(nullptr, "");
  if (outcome == kLoadedBefore) GTEST_SKIP() << "libdebuginfod was loaded in this process already";
  EXPECT_EQ(outcome, kNotLoaded);
}

TEST(DebugSearch, ServerConfiguredAsksDebuginfod) {
  test_support::TempDir cache;
  // Nothing listens there: the client is loaded, asks, and is refused.
  const int outcome = symbolise_without_debug_info("http://127.0.0.1:1", cache.path().string());
  if (outcome == kLoadedBefore) GTEST_SKIP() << "libdebuginfod was loaded in this process already";
  if (outcome == kNoLibrary) GTEST_SKIP() << "no libdebuginfod.so.1";
  EXPECT_EQ(outcome, kLoaded);
}

TEST(DebugSearch, EmptyUrlsConfigureNoServer) {
  ASSERT_EQ(setenv("DEBUGINFOD_URLS", "", 1), 0);
  EXPECT_FALSE(debuginfod_configured());
  ASSERT_EQ(setenv("DEBUGINFOD_URLS", "http://127.0.0.1:1", 1), 0);
  EXPECT_TRUE(debuginfod_configured());
  ASSERT_EQ(unsetenv("DEBUGINFOD_URLS"), 0);
  EXPECT_FALSE(debuginfod_configured());
}

// The places by name, each found alone, and the file itself not counted.
TEST(DebugSearch, DebuglinkPlacesBesideTheFile) {
  test_support::TempDir dir;
  const fs::path root(dir.path());
  const fs::path file = root / "libx.so";
  std::ofstream(file) << "x";
  const auto put = [](const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "d";
  };
  EXPECT_FALSE(local_debug_file_may_exist(file.string(), {}, nullptr));
  EXPECT_FALSE(local_debug_file_may_exist(file.string(), {}, "libx.so"));  // itself
  for (const fs::path& p : {root / "libx.so.debug", root / ".debug" / "libx.so.debug", root / ".debug" / "libx.so"}) {
    put(p);
    EXPECT_TRUE(local_debug_file_may_exist(file.string(), {}, nullptr)) << p;
    fs::remove(p);
  }
  EXPECT_FALSE(local_debug_file_may_exist(file.string(), {}, "other.debug"));
  put(root / ".debug" / "other.debug");
  EXPECT_TRUE(local_debug_file_may_exist(file.string(), {}, "other.debug"));
  EXPECT_FALSE(local_debug_file_may_exist(file.string(), {}, "third.debug"));

  // Through a symlink: the places beside the file it leads to.
  const fs::path elsewhere = root / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_symlink(file, elsewhere / "liby.so");
  EXPECT_TRUE(local_debug_file_may_exist((elsewhere / "liby.so").string(), {}, "other.debug"));
  EXPECT_FALSE(local_debug_file_may_exist((elsewhere / "liby.so").string(), {}, "third.debug"));
}

}  // namespace
}  // namespace memloupe::symbolize
