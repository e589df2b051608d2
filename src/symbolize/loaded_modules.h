// The modules of the calling process, as the recorder reports them in
// ModuleLoad events (path, build-id, mapped range, load bias). For
// symbolising this process's own addresses (tests and benchmarks), and for
// the finaliser's guess of a traced program's C library
// (finalize/symbol_preparer.cc): a Symbolizer keys its files by (path,
// build-id), so a module of this process finds the same file as the traced
// program's when both loaded the same one.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "symbolize/module_map.h"

namespace memloupe::symbolize {

std::vector<Module> loaded_modules();

// The loaded module containing `address`.
std::optional<Module> loaded_module_at(uint64_t address);

// The first loaded library whose file name (after the last '/') starts with
// `file_name_prefix` (e.g. "libc.so").
std::optional<Module> loaded_module_named(std::string_view file_name_prefix);

}  // namespace memloupe::symbolize
