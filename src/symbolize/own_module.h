// A module loaded in this process, described as a recorder describes the
// modules of the program it records (recorder/modules.cc: the loader's name
// for it and its GNU build-id), so that a Symbolizer keyed by (path, build-id)
// finds the same file when the traced program loaded the same one.
#pragma once

#include <optional>
#include <string_view>

#include "symbolize/module_map.h"

namespace memloupe::symbolize {

// The first loaded object whose file name (after the last '/') starts with
// `file_name_prefix` (e.g. "libc.so"), or nullopt. Only path and build_id are
// meaningful: its addresses are this process's.
std::optional<Module> own_loaded_module(std::string_view file_name_prefix);

}  // namespace memloupe::symbolize
