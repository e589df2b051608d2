// The allocators a replay compares: glibc (the process's own malloc, nothing
// preloaded) and Debian's packaged jemalloc, tcmalloc and mimalloc, found by
// soname in the system's library directories; plus any `--allocator NAME=PATH`.
#pragma once

#include <string>
#include <vector>

#include "format/expected.h"

namespace memloupe::replay {

struct Allocator {
  std::string name;
  std::string library;  // what LD_PRELOAD gets; empty for glibc
  std::string missing;  // non-empty: cannot run, and why (names the package to install)
};

inline constexpr const char* kDefaultAllocators = "glibc,jemalloc,tcmalloc,mimalloc";

// `names`: comma-separated known names; `extra`: NAME=PATH.so items, added
// after them (a NAME that is also known replaces the packaged library).
// Errors: an unknown name, an item without '=', a path with ':' or ' '
// (LD_PRELOAD cannot express it).
Expected<std::vector<Allocator>> choose_allocators(const std::string& names, const std::vector<std::string>& extra);

// Where a soname is found among the library directories, or "".
std::string find_library(const std::string& soname);

}  // namespace memloupe::replay
