// The modules of the calling process, as the recorder reports them in
// ModuleLoad events (path, build-id, mapped range, load bias). For
// symbolising this process's own addresses: tests and benchmarks.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "symbolize/module_map.h"

namespace memloupe::symbolize {

std::vector<Module> loaded_modules();

// The loaded module containing `address`.
std::optional<Module> loaded_module_at(uint64_t address);

}  // namespace memloupe::symbolize
