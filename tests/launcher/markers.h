// Expected line numbers of the calls marked "// @NAME" in sites.cc.
#pragma once

#include <string>

namespace memloupe::testing {

// The 1-based line of sites.cc holding the comment "// @marker"; 0 if none.
int marker_line(const std::string& marker);

}  // namespace memloupe::testing
