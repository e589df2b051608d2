// The preload library must not drag the C++ runtime (libstdc++.so) into the
// programs it traces: loading it into a C program would change that program
// (libstdc++'s start-up allocates a 72 KiB exception pool, among other things).
//
// Our own code is built with -fno-exceptions and never names the runtime, but
// parts of the format and unwind libraries that are linked in are built with
// exceptions on (they are shared with the CLI) and name a handful of runtime
// entry points. None of them can run inside the recorder:
//  - the std::__throw_* helpers back bounds checks (string_view::substr,
//    vector growth) on paths the recorder does not take; if one ever fired it
//    would be a recorder bug, and aborting is what -fno-exceptions code does;
//  - the personality routine is consulted only when an exception unwinds
//    through those frames, and no exception passes through the recorder.
// So they are defined here, hidden: the program's own C++ runtime (if it has
// one) is untouched, and `ldd libmemloupe_preload.so` shows no libstdc++.
#include <unwind.h>

#include <cstdlib>

#define MEMLOUPE_LOCAL __attribute__((visibility("hidden")))

namespace std {
[[noreturn]] MEMLOUPE_LOCAL void __throw_length_error(const char*) { std::abort(); }
[[noreturn]] MEMLOUPE_LOCAL void __throw_out_of_range_fmt(const char*, ...) { std::abort(); }
[[noreturn]] MEMLOUPE_LOCAL void __throw_bad_alloc() { std::abort(); }
[[noreturn]] MEMLOUPE_LOCAL void __throw_bad_array_new_length() { std::abort(); }
}  // namespace std

extern "C" MEMLOUPE_LOCAL _Unwind_Reason_Code __gxx_personality_v0(int, _Unwind_Action, _Unwind_Exception_Class,
                                                                 _Unwind_Exception*, _Unwind_Context*) {
  return _URC_CONTINUE_UNWIND;  // no handlers, no cleanups: see above
}
