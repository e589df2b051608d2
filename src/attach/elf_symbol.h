// A defined symbol's value in an ELF file's dynamic symbol table: where dlopen
// is in the target's libc, and the attach entry points in our library.
#pragma once

#include <cstdint>
#include <string>

#include "format/expected.h"

namespace memloupe::attach {

// The st_value of the first defined STT_FUNC named `name` in the .dynsym of `path`.
Expected<uint64_t> dynamic_symbol(const std::string& path, const std::string& name);

}  // namespace memloupe::attach
