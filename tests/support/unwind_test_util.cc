#include "support/unwind_test_util.h"

#include <algorithm>

#include "recorder/unwind/libunwind_backtrace.h"
#include "recorder/unwind/unwind.h"

namespace memloupe::recorder::unwind_detail {

// The reference unwinder is dlopen'ed, once, before any test runs.
[[maybe_unused]] const bool g_libunwind_loaded = libunwind_load();

__attribute__((noinline)) Stacks capture_stacks(size_t max_frames, size_t skip) {
  Stacks s;
  s.fast.resize(max_frames);
  s.api.resize(max_frames);
  s.libunwind.resize(max_frames);
  const FastResult r = fast_unwind_here(s.fast.data(), max_frames, skip + 1);
  s.fast.resize(r.frames);
  s.outcome = r.outcome;
  s.api.resize(unwind_here(s.api.data(), max_frames, skip + 1));
  s.libunwind.resize(libunwind_backtrace(s.libunwind.data(), max_frames, skip + 1));
  MEMLOUPE_KEEP_FRAME();
  return s;
}

long find_chain(const std::vector<uint64_t>& frames, const std::vector<uint64_t>& chain) {
  const auto it = std::search(frames.begin(), frames.end(), chain.begin(), chain.end());
  return it == frames.end() ? -1 : static_cast<long>(it - frames.begin());
}

}  // namespace memloupe::recorder::unwind_detail
