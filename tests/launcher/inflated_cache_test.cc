// The inflated copies kept on disk between commands
// (symbolize/inflated_cache.h), with real files and libelf: a miss writes the
// entry, a later command's InflatedFiles maps it and gives the same frames;
// a damaged entry is removed and made again; no cache when it is off or its
// folder cannot be made; the folder the environment names; the bound.
#include "symbolize/inflated_cache.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "format/unique_fd.h"
#include "libc_debug.h"
#include "sites.h"
#include "symbolize/file_build_id.h"
#include "symbolize/global_lines.h"
#include "symbolize/inflated_files.h"
#include "symbolize/loaded_modules.h"
#include "symbolize/symbolizer.h"

namespace memloupe::symbolize {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> text(const std::vector<reader::OwnedFrame>& frames) {
  std::vector<std::string> out;
  for (const reader::OwnedFrame& f : frames)
    out.push_back(f.function + " " + f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column));
  return out;
}

// A fresh folder of this test's own.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("memloupe-cache-test-" + std::to_string(getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::vector<fs::path> files_in(const fs::path& dir) {
  std::vector<fs::path> out;
  if (fs::is_directory(dir))
    for (const auto& e : fs::recursive_directory_iterator(dir))
      if (e.is_regular_file()) out.push_back(e.path());
  return out;
}

// The test program with its debug sections compressed (see
// inflated_files_test.cc), an address in it and its frames read by libdw
// from the program itself.
struct Compressed {
  Compressed() {
    const memloupe_testprog::Capture c = memloupe_testprog::build_widgets(2);
    ::operator delete(c.block);
    address = c.return_address;
    module = *loaded_module_at(address);
    expected = text(Symbolizer().symbolize(module, address));
    module.path += ".zdebug";
  }
  // The frames at `address` from the compressed file, read through `files`.
  std::vector<std::string> frames(const std::shared_ptr<InflatedFiles>& files) const {
    return text(Symbolizer({.inflated = files}).symbolize(module, address));
  }
  uint64_t address = 0;
  Module module;
  std::vector<std::string> expected;
};

std::shared_ptr<InflatedFiles> files_with(const fs::path& folder) {
  return std::make_shared<InflatedFiles>(InflatedCache(folder));
}

TEST(InflatedCache, AMissWritesTheEntryAndTheNextCommandMapsIt) {
  const Compressed c;
  ASSERT_EQ(c.expected.size(), 2u);
  ASSERT_FALSE(file_build_id(c.module.path).empty());
  const fs::path folder = scratch("hit") / "inflated";

  const auto first = files_with(folder);
  EXPECT_EQ(c.frames(first), c.expected);
  EXPECT_EQ(first->inflated(), 1u);
  EXPECT_EQ(first->from_cache(), 0u);
  const std::vector<fs::path> entries = files_in(folder);
  ASSERT_EQ(entries.size(), 1u);  // the entry, no temporary file left
  EXPECT_EQ(fs::status(folder).permissions() & fs::perms::all, fs::perms::owner_all);
  // The ELF bytes are the in-memory copy's, the trailer after them.
  const format::UniqueFd copy(first->open_inflated(c.module.path));
  struct stat st;
  ASSERT_EQ(fstat(copy.get(), &st), 0);
  EXPECT_GT(fs::file_size(entries[0]), static_cast<uintmax_t>(st.st_size));

  // A later command: the entry is read, not inflated, and touched.
  struct timespec old[2] = {{1000, 0}, {1000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, entries[0].c_str(), old, 0), 0);
  const auto second = files_with(folder);
  EXPECT_EQ(c.frames(second), c.expected);
  EXPECT_EQ(second->inflated(), 0u);
  EXPECT_EQ(second->from_cache(), 1u);
  struct stat touched;
  ASSERT_EQ(stat(entries[0].c_str(), &touched), 0);
  EXPECT_GT(touched.st_mtim.tv_sec, 1000);
  fs::remove_all(folder.parent_path());
}

// A file rewritten in place (another modification time) is another entry:
// the old one is never read for it.
TEST(InflatedCache, ARewrittenFileMissesTheOldEntry) {
  Compressed c;
  const fs::path dir = scratch("rewritten");
  const fs::path folder = dir / "inflated";
  fs::copy_file(c.module.path, dir / "copy.zdebug");
  c.module.path = (dir / "copy.zdebug").string();
  EXPECT_EQ(c.frames(files_with(folder)), c.expected);
  struct timespec later[2] = {{2000000000, 0}, {2000000000, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, c.module.path.c_str(), later, 0), 0);
  const auto files = files_with(folder);
  EXPECT_EQ(c.frames(files), c.expected);
  EXPECT_EQ(files->inflated(), 1u);
  EXPECT_EQ(files->from_cache(), 0u);
  EXPECT_EQ(files_in(folder).size(), 2u);
  fs::remove_all(dir);
}

// A flipped byte anywhere in the entry, or an entry cut short: not used,
// removed, made again, and the frames are right.
TEST(InflatedCache, ADamagedEntryIsMadeAgain) {
  const Compressed c;
  const fs::path folder = scratch("damaged");
  EXPECT_EQ(c.frames(files_with(folder)), c.expected);
  const std::vector<fs::path> entries = files_in(folder);
  ASSERT_EQ(entries.size(), 1u);
  const fs::path entry = entries[0];
  const uintmax_t size = fs::file_size(entry);

  for (const uintmax_t offset : {uintmax_t{100}, size / 2, size - 30, size - 1}) {
    SCOPED_TRACE(offset);
    {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(static_cast<std::streamoff>(offset));
      const char b = static_cast<char>(f.get() ^ 0x10);
      f.seekp(static_cast<std::streamoff>(offset));
      f.put(b);
    }
    const auto files = files_with(folder);
    EXPECT_EQ(c.frames(files), c.expected);
    EXPECT_EQ(files->inflated(), 1u);
    EXPECT_EQ(files->from_cache(), 0u);
    EXPECT_EQ(fs::file_size(entry), size);  // made again
    const auto next = files_with(folder);
    EXPECT_EQ(c.frames(next), c.expected);
    EXPECT_EQ(next->from_cache(), 1u);
  }
  for (const uintmax_t cut : {uintmax_t{1}, uintmax_t{40}, size / 2, size}) {
    SCOPED_TRACE(cut);
    fs::resize_file(entry, size - cut);
    const auto files = files_with(folder);
    EXPECT_EQ(c.frames(files), c.expected);
    EXPECT_EQ(files->inflated(), 1u);
    EXPECT_EQ(files->from_cache(), 0u);
    EXPECT_EQ(fs::file_size(entry), size);
  }
  fs::remove_all(folder);
}

// A folder that cannot be made (its parent is a file, whoever runs the
// test): the copy is made in memory as without a cache.
TEST(InflatedCache, AFolderThatCannotBeMadeFallsBackToMemory) {
  const Compressed c;
  const fs::path dir = scratch("unwritable");
  std::ofstream(dir / "file") << "a file\n";
  const auto files = files_with(dir / "file" / "inflated");
  EXPECT_EQ(c.frames(files), c.expected);
  EXPECT_EQ(files->inflated(), 1u);
  EXPECT_EQ(files_in(dir).size(), 1u);  // the file alone
  fs::remove_all(dir);
}

TEST(InflatedCache, TheFolderFromTheEnvironment) {
  const auto folder = [](std::map<std::string, std::string> env) {
    return InflatedCache::folder_from_environment([&](const char* name) -> const char* {
      const auto it = env.find(name);
      return it == env.end() ? nullptr : it->second.c_str();
    });
  };
  using P = std::optional<fs::path>;
  EXPECT_EQ(folder({{"MEMLOUPE_CACHE_DIR", "/c"}, {"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}), P("/c/inflated"));
  EXPECT_EQ(folder({{"MEMLOUPE_CACHE_DIR", "off"}, {"HOME", "/h"}}), std::nullopt);
  EXPECT_EQ(folder({{"MEMLOUPE_CACHE_DIR", ""}, {"HOME", "/h"}}), std::nullopt);
  EXPECT_EQ(folder({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}}), P("/x/memloupe/inflated"));
  EXPECT_EQ(folder({{"XDG_CACHE_HOME", "relative"}, {"HOME", "/h"}}), P("/h/.cache/memloupe/inflated"));
  EXPECT_EQ(folder({{"XDG_CACHE_HOME", ""}, {"HOME", "/h"}}), P("/h/.cache/memloupe/inflated"));
  EXPECT_EQ(folder({{"HOME", "/h"}}), P("/h/.cache/memloupe/inflated"));
  EXPECT_EQ(folder({{"HOME", ""}}), std::nullopt);
  EXPECT_EQ(folder({}), std::nullopt);
}

// InflatedFiles() as a command makes it, in a fake home: its default folder
// (made 0700), XDG_CACHE_HOME's, and nothing when the cache is off. (ctest
// runs each test in a process of its own: the environment is this test's.)
TEST(InflatedCache, ACommandWritesWhereTheEnvironmentSays) {
  const Compressed c;
  const fs::path home = scratch("home");
  ASSERT_EQ(unsetenv("MEMLOUPE_CACHE_DIR"), 0);
  ASSERT_EQ(unsetenv("XDG_CACHE_HOME"), 0);
  ASSERT_EQ(setenv("HOME", home.c_str(), 1), 0);
  EXPECT_EQ(c.frames(std::make_shared<InflatedFiles>()), c.expected);
  const fs::path folder = home / ".cache" / "memloupe" / "inflated";
  EXPECT_EQ(files_in(folder).size(), 1u);
  EXPECT_EQ(fs::status(home / ".cache").permissions() & fs::perms::all, fs::perms::owner_all);
  const auto again = std::make_shared<InflatedFiles>();
  EXPECT_EQ(c.frames(again), c.expected);
  EXPECT_EQ(again->from_cache(), 1u);

  const fs::path xdg = scratch("xdg");
  ASSERT_EQ(setenv("XDG_CACHE_HOME", xdg.c_str(), 1), 0);
  EXPECT_EQ(c.frames(std::make_shared<InflatedFiles>()), c.expected);
  EXPECT_EQ(files_in(xdg / "memloupe" / "inflated").size(), 1u);

  fs::remove_all(home);
  fs::remove_all(xdg);
  fs::create_directories(home);
  fs::create_directories(xdg);
  ASSERT_EQ(setenv("MEMLOUPE_CACHE_DIR", "off", 1), 0);
  const auto off = std::make_shared<InflatedFiles>();
  EXPECT_EQ(c.frames(off), c.expected);
  EXPECT_EQ(off->inflated(), 1u);
  EXPECT_TRUE(files_in(home).empty());
  EXPECT_TRUE(files_in(xdg).empty());
  fs::remove_all(home);
  fs::remove_all(xdg);
}

// After an entry is written the least recently written files go first,
// until the folder is under the bound.
TEST(InflatedCache, TheFolderIsKeptUnderTheBound) {
  const Compressed c;
  const fs::path folder = scratch("bound");
  const fs::path measure = scratch("measure");
  EXPECT_EQ(c.frames(files_with(measure)), c.expected);
  ASSERT_EQ(files_in(measure).size(), 1u);
  const uintmax_t entry = fs::file_size(files_in(measure)[0]);
  fs::remove_all(measure);

  for (const auto& [name, seconds] : {std::pair{"oldest", 1000}, {"older", 2000}, {"old", 3000}}) {
    std::ofstream(folder / name) << std::string(1000, 'x');
    struct timespec t[2] = {{seconds, 0}, {seconds, 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, (folder / name).c_str(), t, 0), 0);
  }
  const auto files = std::make_shared<InflatedFiles>(InflatedCache(folder, entry + 1500));
  EXPECT_EQ(c.frames(files), c.expected);
  EXPECT_FALSE(fs::exists(folder / "oldest"));
  EXPECT_FALSE(fs::exists(folder / "older"));
  EXPECT_TRUE(fs::exists(folder / "old"));
  EXPECT_EQ(files_in(folder).size(), 2u);
  fs::remove_all(folder);
}

// libc's separate debug file (libc6-dbg's, compressed) from the cache: the
// frames of malloc and a global's line are libdw's own.
TEST(InflatedCache, LibcDebugFileFromTheCache) {
  const auto libc = libc_debug();
  if (!libc) GTEST_SKIP() << "no debug file for libc";
  const fs::path folder = scratch("libc");
  if (!format::UniqueFd(files_with(folder)->open_inflated(libc->debug))) GTEST_SKIP() << libc->debug << " is not compressed";
  ASSERT_EQ(files_in(folder).size(), 1u);

  const Module* module = &libc->module;
  const uint64_t pc = libc->pc;
  const uint64_t global = libc->global;
  const auto cached = files_with(folder);
  Symbolizer mine({.inflated = cached}), by_libdw({.inflated = nullptr});
  const auto expected = text(by_libdw.symbolize(*module, pc));
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(text(mine.symbolize(*module, pc)), expected);
  ASSERT_NE(mine.file(*module), nullptr);
  ASSERT_NE(by_libdw.file(*module), nullptr);
  const GlobalLines my_lines(*mine.file(*module)), their_lines(*by_libdw.file(*module));
  ASSERT_NE(their_lines.at(global), nullptr);
  ASSERT_NE(my_lines.at(global), nullptr);
  EXPECT_EQ(my_lines.at(global)->file, their_lines.at(global)->file);
  EXPECT_EQ(my_lines.at(global)->line, their_lines.at(global)->line);
  EXPECT_EQ(cached->from_cache(), 1u);
  EXPECT_EQ(cached->inflated(), 0u);
  fs::remove_all(folder);
}

// libc's globals table (global_lines.h): the first walk writes it beside the
// inflated copy, the next GlobalLines reads it and gives the walk's file and
// line; a table that names another DIE (an intact entry, a wrong row) is
// caught at its use and the units are walked again, so the line stays right.
TEST(InflatedCache, LibcGlobalsTableWrittenThenReadAndCheckedOnUse) {
  const auto libc = libc_debug();
  if (!libc) GTEST_SKIP() << "no debug file for libc";
  const fs::path folder = scratch("globals");
  const std::optional<InflatedCache> cache(InflatedCache{folder});
  Symbolizer symbolizer({.inflated = nullptr});
  ElfFile* file = symbolizer.file(libc->module);
  ASSERT_NE(file, nullptr);
  const auto key = GlobalLines::key_of(*file);
  ASSERT_TRUE(key.has_value());
  const uint64_t global = libc->global;

  const GlobalLines walked(*file);
  ASSERT_NE(walked.at(global), nullptr);
  const SourceLine expected = *walked.at(global);
  EXPECT_NE(expected.file.find("stdfiles.c"), std::string::npos) << expected.file;

  const GlobalLines first(*file, cache);
  EXPECT_FALSE(first.from_cache());
  ASSERT_TRUE(fs::exists(cache->entry(*key, InflatedCache::kGlobals)));
  const GlobalLines second(*file, cache);
  EXPECT_TRUE(second.from_cache());
  ASSERT_NE(second.at(global), nullptr);
  EXPECT_EQ(second.at(global)->file, expected.file);
  EXPECT_EQ(second.at(global)->line, expected.line);
  EXPECT_TRUE(second.from_cache());  // its row matched its DIE
  EXPECT_EQ(second.at(global + 1), nullptr);

  // The same rows, every line off by one: an intact entry (its CRC
  // is right) that does not describe the file.
  auto table = GlobalLines::decode(*cache->find_globals(*key));
  ASSERT_TRUE(table.has_value());
  for (auto& [address, declared] : *table) declared.line += 1;
  ASSERT_TRUE(cache->store_globals(*key, GlobalLines::encode(*table)));
  const GlobalLines wrong(*file, cache);
  EXPECT_TRUE(wrong.from_cache());
  ASSERT_NE(wrong.at(global), nullptr);
  EXPECT_EQ(wrong.at(global)->line, expected.line);
  EXPECT_EQ(wrong.at(global)->file, expected.file);
  EXPECT_FALSE(wrong.from_cache());  // walked again

  // A damaged entry is removed, and the walk writes it again.
  const fs::path entry = cache->entry(*key, InflatedCache::kGlobals);
  {
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(3);
    const char byte = static_cast<char>(f.get());
    f.seekp(3);
    f.put(static_cast<char>(byte ^ 0x5a));
  }
  const GlobalLines damaged(*file, cache);
  EXPECT_FALSE(damaged.from_cache());
  ASSERT_NE(damaged.at(global), nullptr);
  EXPECT_EQ(damaged.at(global)->line, expected.line);
  EXPECT_TRUE(GlobalLines(*file, cache).from_cache());
  fs::remove_all(folder);
}

}  // namespace
}  // namespace memloupe::symbolize
