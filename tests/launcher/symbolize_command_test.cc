// `memloupe symbolize`: finalising a trace recorded without the launcher.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "process.h"
#include "reader/reader.h"

namespace memloupe::testing {
namespace {

namespace fs = std::filesystem;

#ifdef MEMLOUPE_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// Records `launcher_testprog sites` with the preload library driven by the
// environment alone, as a user would without `memloupe run`.
std::string record_raw(const TempDir& dir) {
#ifdef MEMLOUPE_SANITIZED
  // An ASan-instrumented preload library cannot be preloaded into ordinary
  // programs; the callers skip.
  (void)dir;
  return {};
#endif
  const Finished f = run_process({testprog_exe(), "sites"}, dir.path(), "",
                                 {.set = {{"LD_PRELOAD", preload_library()},
                                          {"MEMLOUPE_OUTPUT", dir / "raw.%p.trace"},
                                          {"MEMLOUPE_MODE", "all"}}});
  EXPECT_EQ(f.status, 0) << f.err;
  for (const auto& e : fs::directory_iterator(dir.path())) {
    if (e.path().filename().string().starts_with("raw.")) return e.path().string();
  }
  ADD_FAILURE() << "no raw trace written: " << f.err;
  return {};
}

bool has_symbols(const std::string& path) {
  auto r = reader::Reader::open(path);
  return r && (*r)->has_symbols_section();
}

TEST(SymbolizeCommand, FinalisesInPlaceOnceUnlessForced) {
  TempDir dir;
  const std::string raw = record_raw(dir);
  if (raw.empty() && kSanitized) GTEST_SKIP() << "needs a preload library without AddressSanitizer";
  ASSERT_FALSE(raw.empty());
  ASSERT_FALSE(has_symbols(raw));

  Finished f = run_process({memloupe_exe(), "symbolize", raw}, dir.path());
  EXPECT_EQ(f.status, 0) << f.err;
  EXPECT_NE(f.err.find("memloupe: wrote " + raw + " ("), std::string::npos) << f.err;
  EXPECT_TRUE(has_symbols(raw));

  f = run_process({memloupe_exe(), "symbolize", raw}, dir.path());
  EXPECT_EQ(f.status, 0);
  EXPECT_NE(f.err.find("already has symbols"), std::string::npos) << f.err;

  f = run_process({memloupe_exe(), "symbolize", "--force", raw, "-o", dir / "again.trace"}, dir.path());
  EXPECT_EQ(f.status, 0) << f.err;
  EXPECT_TRUE(has_symbols(dir / "again.trace"));
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A trace whose events the recorder wrote in their final form is finalised in
// place by appending to it: the same file (inode), its recorded bytes
// untouched, and the same bytes as a finalise into another file.
TEST(SymbolizeCommand, AppendsToTheRecordersFileInPlace) {
  TempDir dir;
  const std::string raw = record_raw(dir);
  if (raw.empty() && kSanitized) GTEST_SKIP() << "needs a preload library without AddressSanitizer";
  ASSERT_FALSE(raw.empty());
  const std::string recorded = slurp(raw);
  const auto inode = [](const std::string& p) {
    struct stat st {};
    EXPECT_EQ(stat(p.c_str(), &st), 0) << p;
    return st.st_ino;
  };
  const ino_t before = inode(raw);

  Finished f = run_process({memloupe_exe(), "symbolize", raw, "-o", dir / "copy.trace"}, dir.path());
  ASSERT_EQ(f.status, 0) << f.err;
  f = run_process({memloupe_exe(), "symbolize", raw}, dir.path());
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(inode(raw), before);
  const std::string finalised = slurp(raw);
  ASSERT_GT(finalised.size(), recorded.size());
  EXPECT_EQ(finalised.compare(0, recorded.size(), recorded), 0);
  EXPECT_TRUE(finalised == slurp(dir / "copy.trace"));
  EXPECT_TRUE(has_symbols(raw));
}

TEST(SymbolizeCommand, TruncatedTraceIsFinalisedAndReported) {
  TempDir dir;
  const std::string raw = record_raw(dir);
  if (raw.empty() && kSanitized) GTEST_SKIP() << "needs a preload library without AddressSanitizer";
  ASSERT_FALSE(raw.empty());
  fs::resize_file(raw, fs::file_size(raw) - 7);

  const Finished f = run_process({memloupe_exe(), "symbolize", raw, "-o", dir / "out.trace"}, dir.path());
  EXPECT_EQ(f.status, 4) << f.err;  // kDamaged: written, but the input was damaged
  EXPECT_NE(f.err.find("kept the"), std::string::npos) << f.err;
  auto r = reader::Reader::open(dir / "out.trace");
  ASSERT_TRUE(r);
  while ((*r)->next() != nullptr) {
  }
  EXPECT_FALSE((*r)->error());
}

TEST(SymbolizeCommand, ExitCodesForMissingFileAndNonTrace) {
  TempDir dir;
  EXPECT_EQ(run_process({memloupe_exe(), "symbolize", dir / "missing.trace"}, dir.path()).status, 2);
  std::ofstream(dir / "junk.trace") << "hello";
  EXPECT_EQ(run_process({memloupe_exe(), "symbolize", dir / "junk.trace"}, dir.path()).status, 3);
}

}  // namespace
}  // namespace memloupe::testing
