// Files memloupe ships beside its executable (the preload library, the
// replayer): found through an environment variable, else next to this
// executable (the build puts them all in <build>/bin/), else in the installed
// layout's companion directory relative to it (cmake/install.cmake:
// ../lib/memloupe, or ../lib/<multiarch>/memloupe under /usr on Debian).
#pragma once

#include <string>

#include "format/expected.h"

namespace memloupe::cli {

Expected<std::string> find_companion(const char* name, const char* env_var);

}  // namespace memloupe::cli
