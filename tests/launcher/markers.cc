#include "markers.h"

#include <fstream>

namespace memloupe::testing {

int marker_line(const std::string& marker) {
  std::ifstream in(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/launcher/sites.cc");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find("// @" + marker) != std::string::npos) return n;
  }
  return 0;
}

}  // namespace memloupe::testing
