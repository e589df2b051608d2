// Files with compressed sections read from their inflated copy
// (symbolize/inflated_files.h): the same frames, data symbols and globals'
// lines as libdw's own inflating, and each file's copy made once (inflated,
// or read from the tests' disk cache, inflated_cache_test.cc) for the
// symbolizers that share the copies.
#include "symbolize/inflated_files.h"

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "format/unique_fd.h"
#include "libc_debug.h"
#include "sites.h"
#include "symbolize/data_symbols.h"
#include "symbolize/global_lines.h"
#include "symbolize/loaded_modules.h"
#include "symbolize/symbolizer.h"

namespace memloupe::symbolize {
namespace {

// Frames as "function file:line:column", innermost first.
std::vector<std::string> text(const std::vector<reader::OwnedFrame>& frames) {
  std::vector<std::string> out;
  for (const reader::OwnedFrame& f : frames)
    out.push_back(f.function + " " + f.file + ":" + std::to_string(f.line) + ":" + std::to_string(f.column));
  return out;
}

// Files whose copy was made: inflated here or read from the disk cache.
size_t copies(const InflatedFiles& files) { return files.inflated() + files.from_cache(); }

struct stat stat_of(int fd) {
  struct stat st {};
  fstat(fd, &st);
  return st;
}

// The size of the file a session reads `file`'s DWARF from: the inflated
// copy's, or the file's own when libdw inflates it.
size_t dwarf_file_size(const ElfFile& file) {
  Dwarf_Addr bias = 0;
  Dwarf* dwarf = dwfl_module_getdwarf(file.module(), &bias);
  size_t size = 0;
  if (dwarf != nullptr) elf_rawfile(dwarf_getelf(dwarf), &size);
  return size;
}

// This test program with its debug sections compressed (objcopy
// --compress-debug-sections=zlib, at build time; the code where it was):
// its inlined frames as from the program itself, and the copy made once.
TEST(InflatedFiles, CompressedProgramGivesTheSameInlinedFrames) {
  const memloupe_testprog::Capture c = memloupe_testprog::build_widgets(2);
  ::operator delete(c.block);
  auto module = loaded_module_at(c.return_address);
  ASSERT_TRUE(module);
  const std::string compressed = module->path + ".zdebug";
  ASSERT_TRUE(std::filesystem::exists(compressed)) << compressed;

  SymbolizerOptions options;
  EXPECT_LT(options.inflated->open_inflated(module->path), 0);  // nothing compressed in it
  const format::UniqueFd image(options.inflated->open_inflated(compressed));
  ASSERT_TRUE(image);
  const format::UniqueFd again(options.inflated->open_inflated(compressed));
  ASSERT_TRUE(again);
  EXPECT_EQ(stat_of(image.get()).st_ino, stat_of(again.get()).st_ino);
  EXPECT_EQ(copies(*options.inflated), 1u);

  Symbolizer plain;
  const auto expected = plain.symbolize(*module, c.return_address);
  ASSERT_EQ(expected.size(), 2u);  // the inlined Builder::make and build_widgets
  auto copy = *module;
  copy.path = compressed;
  Symbolizer shared(options), by_libdw({.inflated = nullptr});
  EXPECT_EQ(text(shared.symbolize(copy, c.return_address)), text(expected));
  EXPECT_EQ(text(by_libdw.symbolize(copy, c.return_address)), text(expected));
  EXPECT_EQ(copies(*options.inflated), 1u);
  ASSERT_NE(shared.file(copy), nullptr);
  ASSERT_NE(by_libdw.file(copy), nullptr);
  EXPECT_EQ(dwarf_file_size(*shared.file(copy)), static_cast<size_t>(stat_of(image.get()).st_size));
  EXPECT_EQ(dwarf_file_size(*by_libdw.file(copy)), std::filesystem::file_size(compressed));
}

// Two threads asking at once (the frames' and the globals' preparing
// threads) get the one copy, made once; a file that is not ELF has none.
TEST(InflatedFiles, ThreadsAskingAtOnceShareOneCopy) {
  const std::string compressed = std::filesystem::read_symlink("/proc/self/exe").string() + ".zdebug";
  ASSERT_TRUE(std::filesystem::exists(compressed)) << compressed;
  InflatedFiles files;
  format::UniqueFd a, b;
  std::thread first([&] { a.reset(files.open_inflated(compressed)); });
  std::thread second([&] { b.reset(files.open_inflated(compressed)); });
  first.join();
  second.join();
  ASSERT_TRUE(a);
  ASSERT_TRUE(b);
  EXPECT_EQ(stat_of(a.get()).st_ino, stat_of(b.get()).st_ino);
  EXPECT_EQ(copies(files), 1u);

  const auto not_elf = std::filesystem::temp_directory_path() / ("memloupe-not-elf-" + std::to_string(getpid()));
  std::ofstream(not_elf) << "not an ELF file\n";
  EXPECT_LT(files.open_inflated(not_elf.string()), 0);
  EXPECT_LT(files.open_inflated("/nonexistent/dir/file"), 0);
  std::filesystem::remove(not_elf);
  EXPECT_EQ(copies(files), 1u);
}

// libc's separate debug file (libc6-dbg's sections are compressed): the
// frames of malloc and the name and line of a global from two symbolizers
// sharing the copies equal libdw's own, and the file was inflated once.
TEST(InflatedFiles, LibcDebugFileInflatedOnceForTwoSymbolizers) {
  const auto libc = libc_debug();
  if (!libc) GTEST_SKIP() << "no debug file for libc";
  const std::string& debug = libc->debug;
  const format::UniqueFd probe(InflatedFiles().open_inflated(debug));
  if (!probe) GTEST_SKIP() << debug << " has no compressed section";

  const uint64_t pc = libc->pc;
  const uint64_t global = libc->global;
  const Module* module = &libc->module;
  SymbolizerOptions options;
  Symbolizer frames(options), globals(options), by_libdw({.inflated = nullptr});

  const auto expected = by_libdw.symbolize(*module, pc);
  ASSERT_FALSE(expected.empty());
  EXPECT_NE(expected.back().function.find("malloc"), std::string::npos) << expected.back().function;
  EXPECT_GT(expected.back().line, 0u);
  EXPECT_EQ(text(frames.symbolize(*module, pc)), text(expected));

  ElfFile* mine = globals.file(*module);
  ElfFile* theirs = by_libdw.file(*module);
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(theirs, nullptr);
  DataSymbols my_symbols(*mine), their_symbols(*theirs);
  const GlobalLines my_lines(*mine), their_lines(*theirs);
  const DataSymbol* symbol = their_symbols.symbol_at(global);
  const SourceLine* line = their_lines.at(global);
  ASSERT_NE(symbol, nullptr);
  ASSERT_NE(line, nullptr);
  EXPECT_EQ(symbol->name, "_IO_2_1_stdout_");
  ASSERT_NE(my_symbols.symbol_at(global), nullptr);
  EXPECT_EQ(my_symbols.symbol_at(global)->name, symbol->name);
  EXPECT_EQ(my_symbols.symbol_at(global)->size, symbol->size);
  ASSERT_NE(my_lines.at(global), nullptr);
  EXPECT_EQ(my_lines.at(global)->file, line->file);
  EXPECT_EQ(my_lines.at(global)->line, line->line);
  EXPECT_EQ(copies(*options.inflated), 1u);
  // Both sessions read the copy (the in-memory one, or the disk cache's).
  const format::UniqueFd shared(options.inflated->open_inflated(debug));
  const auto copy_size = static_cast<size_t>(stat_of(shared.get()).st_size);
  EXPECT_EQ(dwarf_file_size(*mine), copy_size);
  ASSERT_NE(frames.file(*module), nullptr);
  EXPECT_EQ(dwarf_file_size(*frames.file(*module)), copy_size);
  EXPECT_EQ(dwarf_file_size(*theirs), std::filesystem::file_size(debug));
}

}  // namespace
}  // namespace memloupe::symbolize
