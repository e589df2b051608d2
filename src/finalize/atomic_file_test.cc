#include "finalize/atomic_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace memloupe::finalize {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Dir {
  Dir() : path(fs::temp_directory_path() / ("memloupe-atomic-" + std::to_string(getpid()))) {
    fs::create_directories(path);
  }
  ~Dir() { fs::remove_all(path); }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
  fs::path path;
};

// dir/t.trace, holding `contents`.
fs::path trace_in(const Dir& dir, const std::string& contents) {
  const fs::path target = dir.path / "t.trace";
  std::ofstream(target) << contents;
  return target;
}

TEST(AtomicFile, ReplacesTheFileOnlyOnCommit) {
  Dir dir;
  const fs::path target = trace_in(dir, "old");
  {
    auto file = AtomicFile::create(target.string());
    ASSERT_TRUE(file) << file.error().message;
    const std::string data = "new contents";
    ASSERT_FALSE(file->write({reinterpret_cast<const uint8_t*>(data.data()), data.size()}));
    EXPECT_EQ(slurp(target), "old");  // untouched until commit
    EXPECT_EQ(dir.entries(), 2u);     // the target and the temporary
    ASSERT_FALSE(file->commit());
  }
  EXPECT_EQ(slurp(target), "new contents");
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(AtomicFile, WithoutCommitNothingChangesAndNothingIsLeft) {
  Dir dir;
  const fs::path target = trace_in(dir, "old");
  {
    auto file = AtomicFile::create(target.string());
    ASSERT_TRUE(file);
    ASSERT_FALSE(file->write({reinterpret_cast<const uint8_t*>("x"), 1}));
  }
  EXPECT_EQ(slurp(target), "old");
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(AtomicFile, MissingDirectoryIsAnError) {
  auto file = AtomicFile::create("/nonexistent-dir/t.trace");
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find("/nonexistent-dir/t.trace"), std::string::npos);
}

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

TEST(AppendedFile, KeepsWhatWasAppendedOnCommit) {
  Dir dir;
  const fs::path target = trace_in(dir, "events");
  {
    auto file = AppendedFile::open(target.string(), 6);
    ASSERT_TRUE(file) << file.error().message;
    ASSERT_FALSE(file->append(bytes_of("+symbols")));
    ASSERT_FALSE(file->append(bytes_of("+index")));
    EXPECT_EQ(file->size(), 20u);
    ASSERT_FALSE(file->commit());
  }
  EXPECT_EQ(slurp(target), "events+symbols+index");
  EXPECT_EQ(dir.entries(), 1u);
}

TEST(AppendedFile, WithoutCommitTheFileIsCutBackToItsSizeAtOpen) {
  Dir dir;
  const fs::path target = trace_in(dir, "events");
  {
    auto file = AppendedFile::open(target.string(), 6);
    ASSERT_TRUE(file);
    ASSERT_FALSE(file->append(bytes_of("+half")));
    EXPECT_EQ(slurp(target), "events+half");  // appended in place, not to a copy
  }
  EXPECT_EQ(slurp(target), "events");
}

TEST(AppendedFile, RefusesAFileThatIsNotTheSizeThatWasRead) {
  Dir dir;
  const fs::path target = trace_in(dir, "events, and more another writer added");
  auto file = AppendedFile::open(target.string(), 6);
  ASSERT_FALSE(file);
  EXPECT_NE(file.error().message.find(target.string()), std::string::npos) << file.error().message;
  EXPECT_FALSE(AppendedFile::open((dir.path / "missing.trace").string(), 0));
  EXPECT_FALSE(AppendedFile::open(dir.path.string(), fs::file_size(target)));  // a directory
}

}  // namespace
}  // namespace memloupe::finalize
