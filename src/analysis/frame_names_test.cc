// Where the views start a site: analysis::is_library_frame and first_own_frame
// on the frames real programs give (paths as Debian installs them).
#include "analysis/frame_names.h"

#include <gtest/gtest.h>

#include "analysis/call_tree.h"

namespace memloupe::analysis {
namespace {

constexpr std::string_view kLibc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
constexpr std::string_view kCc1plus = "/usr/lib/gcc/x86_64-linux-gnu/12/cc1plus";

TEST(LibraryFrame, SystemSharedObjectsAreLibraryEvenWithSourceFiles) {
  // libc6-dbg's debug file gives glibc relative source paths.
  EXPECT_TRUE(is_library_frame("../sysdeps/nptl/libc_start_call_main.h", kLibc, true));
  EXPECT_TRUE(is_library_frame("", "/lib/x86_64-linux-gnu/libstdc++.so.6", true));
  EXPECT_TRUE(is_library_frame("", "/lib64/ld-linux-x86-64.so.2", true));
  EXPECT_TRUE(is_library_frame("", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", true));
}

TEST(LibraryFrame, AnExecutablesNamedFunctionsAreTheProgramsWithoutDebugInfo) {
  EXPECT_FALSE(is_library_frame("", kCc1plus, true));  // under /usr/lib, but not a shared object
  EXPECT_FALSE(is_library_frame("", "/usr/bin/python3.11", true));
  EXPECT_TRUE(is_library_frame("", kCc1plus, false));  // an address nothing names
  EXPECT_TRUE(is_library_frame("", "", true));          // no module known
}

TEST(LibraryFrame, SourceFilesDecideOutsideTheSystemsSharedObjects) {
  EXPECT_FALSE(is_library_frame("/home/u/src/app.cc", "/home/u/build/app", true));
  EXPECT_FALSE(is_library_frame("src/plugin.cc", "/home/u/build/libplugin.so", true));
  // /usr/local/ holds the machine's own software, not the distribution's.
  EXPECT_FALSE(is_library_frame("/opt/app/src/a.cc", "/usr/local/lib/libapp.so.1", true));
  // The system's headers inlined into the program's own code.
  EXPECT_TRUE(is_library_frame("/usr/include/c++/12/bits/stl_vector.h", "/home/u/build/app", true));
  // A shared object without debug information, outside the system's directories.
  EXPECT_TRUE(is_library_frame("", "/home/u/build/libplugin.so", true));
  EXPECT_TRUE(is_library_frame("", "/home/u/build/libplugin.so.3", true));
  EXPECT_FALSE(is_library_frame("", "/home/u/build/app.solver", true));  // ".so" inside a word
}

Frame frame(std::string function, std::string_view module, std::string file = {}, bool named = true) {
  Frame f;
  f.function = std::move(function);
  f.file = std::move(file);
  f.module = module;
  f.symbolized = named;
  return f;
}

TEST(LibraryFrame, ACompilersSitesStartAtItsOwnFunctionNotAtLibcsMain) {
  // cc1plus (no DWARF, a symbol table) under glibc with libc6-dbg installed:
  // innermost first, as the views hold them.
  const Frame f[] = {frame("xmalloc", kCc1plus), frame("cc1plus+0x1b6bd65", kCc1plus, {}, false),
                     frame("lra_assign()", kCc1plus),
                     frame("__libc_start_call_main", kLibc, "../sysdeps/nptl/libc_start_call_main.h")};
  EXPECT_EQ(first_own_frame({&f[0], &f[1], &f[2], &f[3]}), 0u);
  EXPECT_EQ(first_own_frame({&f[1], &f[2], &f[3]}), 1u);
  EXPECT_EQ(first_own_frame({&f[3]}), 0u);  // every frame library code: the innermost
}

}  // namespace
}  // namespace memloupe::analysis
