// The modules of the calling process, as the recorder would report them in
// ModuleLoad events (path, build-id, mapped range, load bias).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "symbolize/module_map.h"

namespace memloupe::testing {

std::vector<symbolize::Module> self_modules();

// The module of this process containing `address`.
std::optional<symbolize::Module> self_module_at(uint64_t address);

// The 1-based line of sites.cc holding the comment "// @marker"; 0 if none.
int marker_line(const std::string& marker);

}  // namespace memloupe::testing
