// `memloupe run` end to end: the program's stdin, stdout, exit status and
// environment are as without memloupe, and the trace it leaves is finalised
// with symbols. Signals: run_signals_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "markers.h"
#include "run_fixture.h"
#include "symbolize/file_build_id.h"
#include "symbolize/loaded_modules.h"

namespace memloupe::testing {
namespace {

namespace fs = std::filesystem;


TEST_F(Run, ExitStatusIsTheProgramsAndTheTraceIsReported) {
  const Finished f = run({"run", "-o", "t.trace", "--", testprog_exe(), "exit", "3"});
  EXPECT_EQ(f.status, 3) << f.err;
  EXPECT_TRUE(std::regex_search(f.err, std::regex("memloupe: wrote .*/t\\.trace \\([0-9]+ events, [0-9]+ bytes\\)\n$")))
      << f.err;
  auto r = open_or_fail(dir_ / "t.trace");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->has_symbols_section());
}

TEST_F(Run, StdinAndStdoutPassThrough) {
  std::string input;
  for (int i = 0; input.size() < 200'000; ++i) input += "line " + std::to_string(i * 7919 % 1000) + "\n";
  const Finished f = run({"run", "-o", "t.trace", "--", testprog_exe(), "cat"}, input);
  EXPECT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(f.out, input);
  EXPECT_NE(f.err.find("bytes " + std::to_string(input.size()) + "\n"), std::string::npos) << f.err;
}

TEST_F(Launch, MissingProgramExits127) {
  Finished f = run({"run", "--", dir_ / "no-such-program"});
  EXPECT_EQ(f.status, 127);
  EXPECT_NE(f.err.find("memloupe: cannot run " + (dir_ / "no-such-program").string() + ": No such file or directory"),
            std::string::npos)
      << f.err;
  f = run({"run", "--", "memloupe-no-such-program-in-path"});
  EXPECT_EQ(f.status, 127) << f.err;
  EXPECT_TRUE(traces().empty());
}

TEST_F(Launch, ProgramThatCannotBeExecutedExits126) {
  const std::string script = dir_ / "not-executable";
  std::ofstream(script) << "#!/bin/sh\n";
  const Finished f = run({"run", "--", script});
  EXPECT_EQ(f.status, 126) << f.err;
  EXPECT_NE(f.err.find("Permission denied"), std::string::npos) << f.err;
}

TEST_F(Run, DefaultNameIsProgramAndPidInTheCurrentDirectory) {
  const Finished f = run({"run", "--", testprog_exe(), "sites"});
  EXPECT_EQ(f.status, 0) << f.err;
  const auto files = traces();
  ASSERT_EQ(files.size(), 1u) << f.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_match(files[0], m, std::regex("memloupe\\.launcher_testprog\\.([0-9]+)\\.trace")))
      << files[0];
  auto r = open_or_fail(dir_ / files[0]);
  ASSERT_TRUE(r);
  EXPECT_EQ(std::to_string(r->info().pid), m[1].str());
}

TEST_F(Run, OptionsReachTheRecordersEnvironment) {
  // (MEMLOUPE_OUTPUT is not among them: the recorder takes it out of the
  // environment so that untraced children do not inherit it.)
  const std::vector<std::string> names = {"MEMLOUPE_MODE", "MEMLOUPE_EVERY", "MEMLOUPE_DEPTH",
                                          "MEMLOUPE_FOLLOW_FORK"};
  auto env_of = [&](std::vector<std::string> options) {
    std::vector<std::string> args = {"run", "-o", "t.trace"};
    args.insert(args.end(), options.begin(), options.end());
    args.insert(args.end(), {"--", testprog_exe(), "env"});
    args.insert(args.end(), names.begin(), names.end());
    return run(args).out;
  };
  EXPECT_EQ(env_of({"--every", "1MiB", "--depth", "32"}),
            "MEMLOUPE_MODE=sampled\nMEMLOUPE_EVERY=1048576\nMEMLOUPE_DEPTH=32\n"
            "MEMLOUPE_FOLLOW_FORK=0\n");
  EXPECT_EQ(env_of({"--rate", "0.001"}),
            "MEMLOUPE_MODE=sampled\nMEMLOUPE_EVERY=1000\nMEMLOUPE_DEPTH unset\nMEMLOUPE_FOLLOW_FORK=0\n");
  EXPECT_EQ(env_of({"--all", "--follow-fork"}),
            "MEMLOUPE_MODE=all\nMEMLOUPE_EVERY unset\nMEMLOUPE_DEPTH unset\n"
            "MEMLOUPE_FOLLOW_FORK=1\n");
  // Bad values stop memloupe before the program runs.
  for (const std::string& file : traces()) fs::remove(dir_ / file);
  Finished f = run({"run", "--every", "lots", "--", testprog_exe(), "exit", "9"});
  EXPECT_EQ(f.status, 1);
  EXPECT_NE(f.err.find("--every"), std::string::npos) << f.err;
  f = run({"run", "--all", "--every", "4096", "--", testprog_exe(), "exit", "9"});
  EXPECT_NE(f.status, 0);
  EXPECT_NE(f.status, 9);
  EXPECT_TRUE(traces().empty());
}

TEST_F(Run, KeepsAnExistingLdPreload) {
  // libm is loadable on any glibc system (a bare name is searched for).
  const Finished f = run({"run", "-o", "t.trace", "--", testprog_exe(), "env", "LD_PRELOAD"}, "",
                         {.set = {{"LD_PRELOAD", "libm.so.6"}}});
  EXPECT_EQ(f.out, "LD_PRELOAD=" + fs::canonical(preload_library()).string() + ":libm.so.6\n") << f.err;
}

TEST_F(Run, SaysSoWhenNoTraceWasWritten) {
  // A preload library that records nothing stands for a program that dropped
  // LD_PRELOAD from its environment.
  const Finished f = run({"run", "-o", "t.trace", "--", testprog_exe(), "exit", "4"}, "",
                         {.set = {{"MEMLOUPE_PRELOAD", std::string(MEMLOUPE_BINARY_DIR) +
                                                           "/bin/libmemloupe_launcher_noop.so"}}});
  EXPECT_EQ(f.status, 4);
  EXPECT_NE(f.err.find("memloupe: no trace was written to " + (dir_ / "t.trace").string()), std::string::npos) << f.err;
}

std::string basename_of(const std::string& path) { return fs::path(path).filename().string(); }

// The call chain of build_widgets' allocation, as recorded by the real
// preload library and symbolised by the launcher.
TEST_F(Run, TraceNamesTheKnownCallChainWithInlinedFrames) {
  const Finished f = run({"run", "--all", "-o", "t.trace", "--", testprog_exe(), "sites"});
  ASSERT_EQ(f.status, 0) << f.err;
  auto r = open_or_fail(dir_ / "t.trace");
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->has_symbols_section());
  std::vector<uint64_t> widgets_bt, c_bt;
  while (const format::Event* e = r->next()) {
    const auto* a = std::get_if<format::Alloc>(e);
    if (a == nullptr) continue;
    // The sizes testprog.cc allocates: 1000 widgets of 16 bytes, 777 bytes.
    if (a->size == 16000) widgets_bt.assign(a->backtrace.begin(), a->backtrace.end());
    if (a->size == 777) c_bt.assign(a->backtrace.begin(), a->backtrace.end());
  }
  EXPECT_FALSE(r->error()) << r->error()->message;
  ASSERT_GE(widgets_bt.size(), 3u);
  ASSERT_GE(c_bt.size(), 3u);
  const reader::SymbolTable& symbols = r->symbols();
  auto frames_of = [&](uint64_t address) {
    auto it = symbols.find(address);
    return it == symbols.end() ? std::vector<reader::OwnedFrame>{} : it->second;
  };
  // [0] in leaf_allocate, at its call to operator new.
  auto leaf = frames_of(widgets_bt[0]);
  ASSERT_EQ(leaf.size(), 1u);
  EXPECT_EQ(leaf[0].function, "memloupe_testprog::leaf_allocate(unsigned long)");
  EXPECT_EQ(basename_of(leaf[0].file), "sites.cc");
  EXPECT_EQ(leaf[0].line, static_cast<uint32_t>(marker_line("leaf-call")));
  // [1] Builder<Widget>::make, inlined into build_widgets.
  auto outer = frames_of(widgets_bt[1]);
  ASSERT_EQ(outer.size(), 2u);
  EXPECT_EQ(outer[0].function, "memloupe_testprog::Builder<memloupe_testprog::Widget>::make(unsigned long)");
  EXPECT_EQ(outer[0].line, static_cast<uint32_t>(marker_line("inlined-call")));
  EXPECT_EQ(outer[1].function, "memloupe_testprog::build_widgets(unsigned long)");
  EXPECT_EQ(outer[1].line, static_cast<uint32_t>(marker_line("outer-call")));
  // c_allocate's chain shares leaf_allocate's frame and then names the C function.
  EXPECT_EQ(c_bt[0], widgets_bt[0]);
  auto c = frames_of(c_bt[1]);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].function, "c_allocate");
  EXPECT_EQ(c[0].line, static_cast<uint32_t>(marker_line("c-call")));
}

// `memloupe run` prepares the symbols of the header's executable and of its
// own C library while the program runs (finalize/symbol_preparer.cc), as a
// guess of the program's modules: the guess is of use only if it is described
// as the recorder describes the program's modules, path and build-id alike.
TEST_F(Run, TheGuessedModulesAreDescribedAsTheRecorderDescribesThem) {
  const Finished f = run({"run", "--all", "-o", "t.trace", "--", testprog_exe(), "sites"});
  ASSERT_EQ(f.status, 0) << f.err;
  auto r = open_or_fail(dir_ / "t.trace");
  ASSERT_TRUE(r);
  const auto own = symbolize::loaded_module_named("libc.so");
  ASSERT_TRUE(own);
  int libcs = 0, executables = 0;
  while (const format::Event* e = r->next()) {
    const auto* m = std::get_if<format::ModuleLoad>(e);
    if (m != nullptr && m->path == r->info().executable) {
      ++executables;
      EXPECT_EQ(std::vector<uint8_t>(m->build_id.begin(), m->build_id.end()),
                symbolize::file_build_id(r->info().executable));
      EXPECT_FALSE(m->build_id.empty());
    }
    if (m == nullptr || !fs::path(m->path).filename().string().starts_with("libc.so")) continue;
    ++libcs;
    EXPECT_EQ(m->path, own->path);
    EXPECT_EQ(std::vector<uint8_t>(m->build_id.begin(), m->build_id.end()), own->build_id);
  }
  EXPECT_FALSE(r->error()) << r->error()->message;
  EXPECT_EQ(libcs, 1);
  EXPECT_EQ(executables, 1);
  EXPECT_FALSE(own->build_id.empty());
}

TEST_F(Run, FollowForkFinalisesEveryProcesssTrace) {
  const Finished f = run({"run", "--all", "--follow-fork", "-o", "t.%p.trace", "--", testprog_exe(), "fork"});
  ASSERT_EQ(f.status, 0) << f.err;
  const auto files = traces();
  ASSERT_EQ(files.size(), 2u) << f.err;
  std::set<uint32_t> pids;
  for (const std::string& file : files) {
    auto r = open_or_fail(dir_ / file);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->has_symbols_section()) << file;
    EXPECT_EQ(file, "t." + std::to_string(r->info().pid) + ".trace");
    pids.insert(r->info().pid);
    EXPECT_NE(f.err.find("memloupe: wrote " + (dir_ / file).string()), std::string::npos) << f.err;
  }
  EXPECT_EQ(pids.size(), 2u);
}

// With --follow-fork an image exec'd by the traced process (same pid) gets its
// own trace, NAME.1, and the launcher finalises it too.
TEST_F(Run, FollowForkFinalisesTheTraceOfAnExecdImage) {
  const Finished f = run({"run", "--all", "--follow-fork", "-o", "t.trace", "--", testprog_exe(), "exec"});
  ASSERT_EQ(f.status, 0) << f.err;
  const auto files = traces();
  ASSERT_EQ(files.size(), 2u) << f.err;
  EXPECT_EQ(files[0], "t.trace");
  // The exec'd image continues the launched process's chain (run_exec_chain.h).
  EXPECT_EQ(files[1], "t.trace.1");
  for (const std::string& file : files) {
    auto r = open_or_fail(dir_ / file);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->has_symbols_section()) << file;
    EXPECT_NE(f.err.find("memloupe: wrote " + (dir_ / file).string() + " ("), std::string::npos) << f.err;
  }
}

}  // namespace
}  // namespace memloupe::testing
