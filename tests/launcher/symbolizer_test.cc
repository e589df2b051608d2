// The symbolizer against real optimised code (sites.cc, built -O1 -g) in this
// very process: function names, files, lines and inlined frames.
#include "symbolize/symbolizer.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <thread>

#include "finalize/symbol_preparer.h"
#include "symbolize/data_symbols.h"
#include "markers.h"
#include "symbolize/loaded_modules.h"
#include "sites.h"

// A global with a mangled name, for SymbolTableNamesDemangledWhenAsked.
namespace memloupe_test_globals {
int named_global[4] = {1, 2, 3, 4};
}  // namespace memloupe_test_globals

namespace memloupe::symbolize {
namespace {

using testing::marker_line;

std::string basename_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

// c_allocate's call of operator new: its return address (the block freed)
// and the module it is in.
struct CSite {
  uint64_t return_address = 0;
  std::optional<Module> module;
};
CSite c_site(size_t bytes) {
  memloupe_testprog::Capture c;
  memloupe_testprog::c_allocate(bytes, &c);
  ::operator delete(c.block);
  return {c.return_address, loaded_module_at(c.return_address)};
}

void expect_same_frames(const std::vector<reader::OwnedFrame>& got, const std::vector<reader::OwnedFrame>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i].function, want[i].function);
    EXPECT_EQ(got[i].file, want[i].file);
    EXPECT_EQ(got[i].line, want[i].line);
    EXPECT_EQ(got[i].column, want[i].column);
  }
}

TEST(Symbolizer, NamesInlinedFramesWithCallSites) {
  const memloupe_testprog::Capture c = memloupe_testprog::build_widgets(3);
  ::operator delete(c.block);
  auto module = loaded_module_at(c.return_address);
  ASSERT_TRUE(module);

  Symbolizer symbolizer;
  const auto frames = symbolizer.symbolize(*module, c.return_address);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].function,
            "memloupe_testprog::Builder<memloupe_testprog::Widget>::make(unsigned long)");
  EXPECT_EQ(basename_of(frames[0].file), "sites.cc");
  EXPECT_EQ(frames[0].line, static_cast<uint32_t>(marker_line("inlined-call")));
  EXPECT_GT(frames[0].column, 0u);
  EXPECT_EQ(frames[1].function, "memloupe_testprog::build_widgets(unsigned long)");
  EXPECT_EQ(basename_of(frames[1].file), "sites.cc");
  EXPECT_EQ(frames[1].line, static_cast<uint32_t>(marker_line("outer-call")));
}

TEST(Symbolizer, NamesCFunctionWithoutDemangling) {
  const CSite c = c_site(5);
  const auto& module = c.module;
  ASSERT_TRUE(module);

  Symbolizer symbolizer;
  const auto frames = symbolizer.symbolize(*module, c.return_address);
  ASSERT_EQ(frames.size(), 1u);
  EXPECT_EQ(frames[0].function, "c_allocate");
  EXPECT_EQ(basename_of(frames[0].file), "sites.cc");
  EXPECT_EQ(frames[0].line, static_cast<uint32_t>(marker_line("c-call")));
}

TEST(Symbolizer, BuildIdMismatchWarnsOnceAndNamesNothing) {
  const memloupe_testprog::Capture a = memloupe_testprog::build_widgets(1);
  memloupe_testprog::Capture b;
  memloupe_testprog::c_allocate(1, &b);
  ::operator delete(a.block);
  ::operator delete(b.block);
  auto module = loaded_module_at(a.return_address);
  ASSERT_TRUE(module);
  ASSERT_FALSE(module->build_id.empty());
  module->build_id[0] ^= 0xff;  // "recorded" from another build of this file

  std::vector<std::string> warnings;
  Symbolizer symbolizer({.debug_root = "/nonexistent", .warn = [&](const std::string& w) {
                           warnings.push_back(w);
                         }});
  EXPECT_TRUE(symbolizer.symbolize(*module, a.return_address).empty());
  EXPECT_TRUE(symbolizer.symbolize(*module, b.return_address).empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("build-id"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find(module->path), std::string::npos) << warnings[0];
}

TEST(Symbolizer, MissingFileWarnsOnce) {
  CSite c = c_site(1);
  auto& module = c.module;
  ASSERT_TRUE(module);
  module->path = "/nonexistent/dir/libgone.so";

  int warnings = 0;
  Symbolizer symbolizer({.debug_root = "/nonexistent", .warn = [&](const std::string&) { ++warnings; }});
  EXPECT_TRUE(symbolizer.symbolize(*module, c.return_address).empty());
  EXPECT_TRUE(symbolizer.symbolize(*module, c.return_address + 1).empty());
  EXPECT_EQ(warnings, 1);
}

// Files opened ahead (a follower's preparation, symbolize/prepared_symbolizers.h)
// tell of an unusable file only when the symbolisation asks for it, once, and
// a prepared file gives the frames an unprepared one does.
TEST(Symbolizer, PreparedAheadTellsWhenAskedAndChangesNoFrame) {
  const CSite c = c_site(1);
  const auto& module = c.module;
  ASSERT_TRUE(module);
  Symbolizer plain, ahead;
  ElfFile* file = ahead.file_quietly(*module);
  ASSERT_NE(file, nullptr);
  file->prepare();
  const auto frames = ahead.symbolize(*module, c.return_address);
  ASSERT_FALSE(frames.empty());
  expect_same_frames(frames, plain.symbolize(*module, c.return_address));

  auto gone = *module;
  gone.path = "/nonexistent/dir/libgone.so";
  std::vector<std::string> warnings;
  Symbolizer symbolizer({.debug_root = "/nonexistent", .warn = [&](const std::string& w) {
                           warnings.push_back(w);
                         }});
  EXPECT_EQ(symbolizer.file_quietly(gone), nullptr);
  EXPECT_EQ(symbolizer.file_quietly(gone), nullptr);
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(symbolizer.symbolize(gone, c.return_address).empty());
  EXPECT_TRUE(symbolizer.symbolize(gone, c.return_address + 1).empty());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(gone.path), std::string::npos) << warnings[0];
}

// The follower's preparer symbolises the read's addresses as update() gives
// them (finalize/symbol_preparer.h): the frames symbolize_all gives for the
// same addresses, whatever the batches; an unusable file told of by tell()
// after the exit, not while the program runs, and once.
TEST(SymbolPreparer, SymbolisesTheReadsAddressesAsSymbolizeAllWould) {
  const memloupe_testprog::Capture w = memloupe_testprog::build_widgets(2);
  ::operator delete(w.block);
  const CSite c = c_site(3);
  ASSERT_TRUE(c.module);
  Module gone = *c.module;
  gone.path = "/nonexistent/dir/libgone.so";
  gone.start = gone.end + (1u << 20);  // elsewhere: the module map keeps ranges apart
  gone.end = gone.start + (1u << 20);
  std::vector<std::string> warnings;
  const SymbolizerOptions options{.warn = [&](const std::string& m) { warnings.push_back(m); }};

  finalize::Collected read;
  auto load = [&](const Module& m) {
    read.modules.load({0, m.start, m.end, m.load_bias, m.path, m.build_id});
    return *read.modules.find(m.start);
  };
  const ModuleIndex here = load(*c.module), elsewhere = load(gone);
  finalize::SymbolPreparer preparer(options);
  read.addresses = {{w.return_address, here}, {gone.start + 16, elsewhere}};
  preparer.update(read, false);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // (its thread takes them meanwhile, or after)
  read.addresses.push_back({c.return_address, here});
  read.addresses.push_back({w.return_address + 1, here});
  preparer.update(read, false);
  Symbolizer& symbolizer = preparer.done().frames();
  EXPECT_TRUE(warnings.empty());
  ASSERT_EQ(preparer.symbolized(), read.addresses.size());
  const reader::SymbolTable ahead = preparer.take_symbols();
  symbolizer.tell(read.modules, read.addresses);
  symbolizer.tell(read.modules, read.addresses);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find(gone.path), std::string::npos) << warnings[0];

  Symbolizer plain;
  reader::SymbolTable want;
  symbolize_all(plain, read.modules, read.addresses, want);
  ASSERT_EQ(want.size(), 3u);  // the unusable file's address has none
  ASSERT_EQ(ahead.size(), want.size());
  for (const auto& [address, frames] : want) {
    ASSERT_TRUE(ahead.contains(address)) << address;
    expect_same_frames(ahead.at(address), frames);
  }
}

// A trace symbolised on a machine without the binary: the debug file found by
// build-id under the debug root stands in for it.
TEST(Symbolizer, FallsBackToDebugFileByBuildId) {
  const memloupe_testprog::Capture c = memloupe_testprog::build_widgets(2);
  ::operator delete(c.block);
  auto module = loaded_module_at(c.return_address);
  ASSERT_TRUE(module);
  ASSERT_GE(module->build_id.size(), 2u);

  const std::filesystem::path root =
      std::filesystem::temp_directory_path() / ("memloupe-debug-" + std::to_string(getpid()));
  const std::string id = hex(module->build_id);
  const auto debug_file = root / ".build-id" / id.substr(0, 2) / (id.substr(2) + ".debug");
  std::filesystem::create_directories(debug_file.parent_path());
  std::filesystem::copy_file(module->path, debug_file);
  const std::string original = module->path;
  module->path = "/nonexistent/" + basename_of(original);

  int warnings = 0;
  Symbolizer symbolizer({.debug_root = root.string(), .warn = [&](const std::string&) { ++warnings; }});
  const auto frames = symbolizer.symbolize(*module, c.return_address);
  std::filesystem::remove_all(root);
  EXPECT_EQ(warnings, 0);
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[1].function, "memloupe_testprog::build_widgets(unsigned long)");
  EXPECT_EQ(frames[1].line, static_cast<uint32_t>(marker_line("outer-call")));
}

// libc is stripped; its DWARF comes from the distribution's debug package
// (libc6-dbg on Debian), found through the build-id.
TEST(Symbolizer, UsesSystemDebugInfoForLibc) {
  void* malloc_address = dlsym(RTLD_DEFAULT, "malloc");
  ASSERT_NE(malloc_address, nullptr);
  const auto address = reinterpret_cast<uint64_t>(malloc_address);
  auto module = loaded_module_at(address);
  ASSERT_TRUE(module);
  const std::string id = hex(module->build_id);
  if (id.size() < 2 || !std::filesystem::exists("/usr/lib/debug/.build-id/" + id.substr(0, 2) +
                                                "/" + id.substr(2) + ".debug")) {
    GTEST_SKIP() << "no debug file for " << module->path;
  }
  Symbolizer symbolizer;
  // +1: the symbolizer looks up return_address - 1.
  const auto frames = symbolizer.symbolize(*module, address + 1);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames.back().function.find("malloc"), std::string::npos) << frames.back().function;
  EXPECT_EQ(basename_of(frames.back().file), "malloc.c");
  EXPECT_GT(frames.back().line, 0u);
}

// The names from the symbol tables (a module without DWARF: this program's
// copy with its debug sections stripped, made at build time) are demangled,
// when asked for, as they were when the tables were read: C++ names with
// their parameters, C names as they are, the same again when asked twice.
TEST(Symbolizer, SymbolTableNamesDemangledWhenAsked) {
  const auto module = loaded_module_at(reinterpret_cast<uint64_t>(&memloupe_testprog::build_widgets));
  ASSERT_TRUE(module);
  auto file = ElfFile::open(module->path + ".nodebug", {}, "/nonexistent");
  ASSERT_TRUE(file) << file.error().message;
  const auto vaddr = [&](const void* p) { return reinterpret_cast<uint64_t>(p) - module->load_bias; };
  const std::vector<uint64_t> pcs = {vaddr(reinterpret_cast<const void*>(&memloupe_testprog::build_widgets)) + 1,
                                     vaddr(reinterpret_cast<const void*>(&memloupe_testprog::c_allocate)) + 1,
                                     vaddr(reinterpret_cast<const void*>(&memloupe_testprog::build_widgets)) + 2};
  const auto frames = (*file)->frames(pcs);
  ASSERT_EQ(frames.size(), 3u);
  for (const auto& f : frames) ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(frames[0][0].function, "memloupe_testprog::build_widgets(unsigned long)");
  EXPECT_EQ(frames[1][0].function, "c_allocate");
  EXPECT_EQ(frames[2][0].function, frames[0][0].function);

  DataSymbols globals(**file);
  const DataSymbol* mine = globals.symbol_at(vaddr(&memloupe_test_globals::named_global[1]));
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(mine->name, "memloupe_test_globals::named_global");
  EXPECT_EQ(mine->size, sizeof memloupe_test_globals::named_global);
  EXPECT_EQ(globals.symbol_at(vaddr(&memloupe_test_globals::named_global[0])), mine);
  EXPECT_EQ(mine->name, "memloupe_test_globals::named_global");
}

}  // namespace
}  // namespace memloupe::symbolize
