// Reading the real .eh_frame of this test program and of libc.
#include "recorder/unwind/eh_frame.h"

#include <dlfcn.h>
#include <signal.h>

#include <gtest/gtest.h>

namespace memloupe::recorder::unwind_detail {
namespace {

__attribute__((noinline)) int some_function(int x) {
  asm volatile("" ::: "memory");
  return x * 3;
}

uintptr_t address_of(const char* symbol) {
  return reinterpret_cast<uintptr_t>(dlsym(RTLD_DEFAULT, symbol));
}

TEST(EhFrame, FindsTheFdeOfAFunctionInThisProgram) {
  const auto fn = reinterpret_cast<uintptr_t>(&some_function);
  ModuleTables m;
  ASSERT_TRUE(find_module(fn, m));
  EXPECT_TRUE(m.text.contains(fn));
  ASSERT_NE(m.eh_frame_hdr, 0u);
  const FdeSearch found = search_fde(m.eh_frame_hdr, m.tables, fn);
  ASSERT_TRUE(found.table_usable);
  ASSERT_NE(found.fde, 0u);
  const std::optional<FrameEntry> e = parse_fde(found.fde, m.tables);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->pc_begin, fn);
  EXPECT_GT(e->pc_end, fn);
  EXPECT_FALSE(e->signal_frame);
}

// At a function's first instruction the call has just pushed the return address:
// CFA = RSP + 8 and RBP untouched, whatever the function does later.
TEST(EhFrame, EntryRuleOfFunctionsHereAndInLibc) {
  const Rule entry = frame_rule(CfaBase::kRsp, 8, 0);
  EXPECT_EQ(compute_rule(reinterpret_cast<uintptr_t>(&some_function)), entry);
  for (const char* name : {"qsort", "malloc", "memcpy", "pthread_create"}) {
    const uintptr_t fn = address_of(name);
    ASSERT_NE(fn, 0u) << name;
    EXPECT_EQ(compute_rule(fn), entry) << name;
  }
}

TEST(EhFrame, SignalTrampolineIsRecognised) {
  struct sigaction sa = {}, old = {};
  sa.sa_handler = SIG_IGN;
  ASSERT_EQ(sigaction(SIGUSR2, &sa, &old), 0);
  struct sigaction now = {};
  ASSERT_EQ(sigaction(SIGUSR2, &old, &now), 0);
  // glibc installs its __restore_rt as the restorer and reports it back.
  const auto restorer = reinterpret_cast<uintptr_t>(now.sa_restorer);
  ASSERT_NE(restorer, 0u);
  EXPECT_EQ(compute_rule(restorer - 1).kind, RuleKind::kSignal);
}

TEST(EhFrame, AddressOutsideEveryModuleIsUnknown) {
  int on_stack = 0;
  EXPECT_EQ(compute_rule(reinterpret_cast<uintptr_t>(&on_stack)).kind, RuleKind::kUnknown);
  EXPECT_EQ(compute_rule(0x1000).kind, RuleKind::kUnknown);
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
