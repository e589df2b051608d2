// The allocation functions memloupe knows about: the one list of them.
//
// The recorder hooks each of these; the trace names them by index (`Func`) in
// allocation/free events and in the exact per-function call totals. Adding a
// function means adding one row here (and its hook in src/recorder/hooks.cc).
#pragma once

#include <cstdint>
#include <string_view>

namespace memloupe::format {

// X(enumerator, printable name, role) — role: A allocates, F frees, R reallocates.
#define MEMLOUPE_FUNCS(X)                                       \
  X(Malloc, "malloc", A)                                        \
  X(Calloc, "calloc", A)                                        \
  X(Realloc, "realloc", R)                                      \
  X(Reallocarray, "reallocarray", R)                            \
  X(PosixMemalign, "posix_memalign", A)                         \
  X(AlignedAlloc, "aligned_alloc", A)                           \
  X(Memalign, "memalign", A)                                    \
  X(Valloc, "valloc", A)                                        \
  X(Pvalloc, "pvalloc", A)                                      \
  X(Free, "free", F)                                            \
  X(New, "operator new", A)                                     \
  X(NewNothrow, "operator new(nothrow)", A)                     \
  X(NewAligned, "operator new(align)", A)                       \
  X(NewAlignedNothrow, "operator new(align, nothrow)", A)       \
  X(NewArray, "operator new[]", A)                              \
  X(NewArrayNothrow, "operator new[](nothrow)", A)              \
  X(NewArrayAligned, "operator new[](align)", A)                \
  X(NewArrayAlignedNothrow, "operator new[](align, nothrow)", A) \
  X(Delete, "operator delete", F)                               \
  X(DeleteSized, "operator delete(sized)", F)                   \
  X(DeleteAligned, "operator delete(align)", F)                 \
  X(DeleteSizedAligned, "operator delete(sized, align)", F)     \
  X(DeleteNothrow, "operator delete(nothrow)", F)               \
  X(DeleteAlignedNothrow, "operator delete(align, nothrow)", F) \
  X(DeleteArray, "operator delete[]", F)                        \
  X(DeleteArraySized, "operator delete[](sized)", F)            \
  X(DeleteArrayAligned, "operator delete[](align)", F)          \
  X(DeleteArraySizedAligned, "operator delete[](sized, align)", F) \
  X(DeleteArrayNothrow, "operator delete[](nothrow)", F)        \
  X(DeleteArrayAlignedNothrow, "operator delete[](align, nothrow)", F) \
  X(Mmap, "mmap", A)                                            \
  X(Munmap, "munmap", F)                                        \
  X(Mremap, "mremap", R)                                        \
  X(Sbrk, "sbrk", R)

enum class Func : uint8_t {
#define MEMLOUPE_X(e, name, role) e,
  MEMLOUPE_FUNCS(MEMLOUPE_X)
#undef MEMLOUPE_X
};

inline constexpr unsigned kFuncCount = 0
#define MEMLOUPE_X(e, name, role) +1
    MEMLOUPE_FUNCS(MEMLOUPE_X)
#undef MEMLOUPE_X
    ;

enum class FuncRole : uint8_t { A, F, R };

inline constexpr std::string_view kFuncNames[kFuncCount] = {
#define MEMLOUPE_X(e, name, role) name,
    MEMLOUPE_FUNCS(MEMLOUPE_X)
#undef MEMLOUPE_X
};

inline constexpr FuncRole kFuncRoles[kFuncCount] = {
#define MEMLOUPE_X(e, name, role) FuncRole::role,
    MEMLOUPE_FUNCS(MEMLOUPE_X)
#undef MEMLOUPE_X
};

constexpr std::string_view func_name(Func f) {
  return static_cast<unsigned>(f) < kFuncCount ? kFuncNames[static_cast<unsigned>(f)] : "?";
}
constexpr bool func_valid(unsigned raw) { return raw < kFuncCount; }
constexpr bool func_allocates(Func f) { return kFuncRoles[static_cast<unsigned>(f)] != FuncRole::F; }
constexpr bool func_frees(Func f) { return kFuncRoles[static_cast<unsigned>(f)] != FuncRole::A; }

// Mapped memory: anonymous mmap/mremap and the program break (sbrk/brk), which
// the recorder records as their own kind beside the heap (docs/RECORDER.md,
// "Mapped memory"); the analysis keeps their series apart from the heap's.
constexpr bool func_maps(Func f) { return f >= Func::Mmap && f <= Func::Sbrk; }

}  // namespace memloupe::format
