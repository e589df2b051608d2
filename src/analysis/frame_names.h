// How one return address reads in the views: its source frames (inlined ones
// included) from the trace's symbols, or a stable name when it has none.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/model.h"
#include "reader/reader.h"

namespace memloupe::analysis {

// The module that held `address` (the most recently loaded one, if several did).
const ModuleInfo* module_of(uint64_t address, const std::vector<ModuleInfo>& modules);

// "libfoo.so+0x1a2b" (offset from the load bias: the ELF address, the same in
// every run) or "0x7f..." when no module is known. Names unsymbolised frames,
// and matches them between two traces.
std::string unknown_frame_name(uint64_t address, const std::vector<ModuleInfo>& modules);

// The frames of `address`, OUTERMOST first (the real function, then what was
// inlined into it). One frame named by unknown_frame_name if there are no symbols.
std::vector<Frame> expand_address(uint64_t address, const reader::SymbolTable& symbols,
                                  const std::vector<ModuleInfo>& modules);

// True if one of the frames of `address` has a function name containing one of `needles`.
bool address_matches(uint64_t address, const reader::SymbolTable& symbols,
                     const std::vector<ModuleInfo>& modules, const std::vector<std::string>& needles);

bool contains_any(std::string_view haystack, const std::vector<std::string>& needles);

// Whether a frame is library code rather than the program's own. The one rule
// for where the views start a site's backtrace: the text views and the HTML
// report's tables name a site by its innermost frame that is not library code
// (the innermost frame when every frame is). `module`: the path of the file
// that held the frame's address (empty if unknown). Library code is
// - any frame of a shared object installed in a system directory (/lib*,
//   /usr/ but /usr/local/): glibc, libstdc++, an allocator — even when a separate debug file
//   (Debian's libc6-dbg) gives it source files, which are then relative
//   ("../sysdeps/...") and would otherwise pass for the program's;
// - a frame whose source file is under /usr/ (the compiler's and the system's
//   headers inlined into the program: std::vector, std::__new_allocator);
// - a frame without a source file, unless the symbols name it (`named`) and it
//   is in an executable: so an executable's own functions count as the
//   program's even without debug information (a -g-less program whose symbol
//   table names them: g++'s cc1plus, Debian's python3), while an address
//   nothing names (a stripped executable's) does not start a site.
bool is_library_frame(std::string_view file, std::string_view module, bool named);
// Index of that frame in `frames`, innermost first (0 when none is the program's).
size_t first_own_frame(const std::vector<const Frame*>& frames);

// Allocations the runtime makes once per process and never frees, which
// `leaks` lists apart from the program's: libstdc++'s emergency exception pool
// (eh_alloc.cc's pool, allocated at start-up) and the dynamic loader's (its
// _dl_* functions, or any frame in ld-linux*.so: TLS blocks, link maps). What
// kind, or nothing for the program's own. `frames` innermost first.
std::optional<std::string_view> one_time_runtime_allocation(const std::vector<const Frame*>& frames);

}  // namespace memloupe::analysis
