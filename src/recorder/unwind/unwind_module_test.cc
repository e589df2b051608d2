// Frames in a dlopen'ed library, and the cache after dlclose.
#include <dlfcn.h>

#include <gtest/gtest.h>

#include "recorder/unwind/rule_cache.h"
#include "recorder/unwind/unwind.h"
#include "support/unwind_test_util.h"

namespace memloupe::recorder::unwind_detail {
namespace {

using Recurse = int (*)(int, void (*)(void*), void*);

class Library {
 public:
  Library() : handle_(dlopen(MEMLOUPE_UNWIND_TESTLIB, RTLD_NOW | RTLD_LOCAL)) {}
  ~Library() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Recurse recurse() const { return reinterpret_cast<Recurse>(dlsym(handle_, "testlib_recurse")); }
  bool ok() const { return handle_ != nullptr; }

 private:
  void* handle_;
};

void capture_into(void* arg) { *static_cast<Stacks*>(arg) = capture_stacks(256); }

// How many frames lie in the same module as `fn`.
size_t frames_in_module_of(const std::vector<uint64_t>& frames, void* fn) {
  Dl_info lib = {};
  if (dladdr(fn, &lib) == 0) return 0;
  size_t n = 0;
  for (const uint64_t pc : frames) {
    Dl_info info = {};
    n += dladdr(reinterpret_cast<void*>(pc - 1), &info) != 0 && info.dli_fbase == lib.dli_fbase;
  }
  return n;
}

void unwind_through_library() {
  Library lib;
  ASSERT_TRUE(lib.ok()) << dlerror();
  const Recurse recurse = lib.recurse();
  ASSERT_NE(recurse, nullptr);
  Stacks s;
  EXPECT_EQ(recurse(12, capture_into, &s), 12);
  EXPECT_EQ(s.outcome, Outcome::kComplete);
  EXPECT_EQ(s.fast, s.libunwind);
  EXPECT_EQ(s.api, s.fast);
  // testlib_recurse at depths 12..1 call themselves; depth 0 calls back into us, and
  // the outermost one returns into this function.
  EXPECT_EQ(frames_in_module_of(s.fast, reinterpret_cast<void*>(recurse)), 13u);
}

TEST(UnwindModule, FramesInDlopenedLibrary) { unwind_through_library(); }

TEST(UnwindModule, AfterDlcloseAndReopen) {
  unwind_through_library();
  ASSERT_GT(rule_cache().count(), 0u);
  unwind_modules_changed();  // what the recorder calls after dlclose
  EXPECT_EQ(rule_cache().count(), 0u);
  unwind_through_library();  // the library may now be mapped elsewhere
}

}  // namespace
}  // namespace memloupe::recorder::unwind_detail
