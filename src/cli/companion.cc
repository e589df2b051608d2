#include "cli/companion.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <vector>

// Where `cmake --install` puts the companions relative to the executable
// (cmake/install.cmake defines it from the install directories).
#ifndef MEMLOUPE_COMPANION_RELDIR
#define MEMLOUPE_COMPANION_RELDIR "../lib/memloupe"
#endif

namespace memloupe::cli {

Expected<std::string> find_companion(const char* name, const char* env_var) {
  const auto is_file = [](const std::string& path) { return access(path.c_str(), R_OK) == 0; };
  if (const char* env = std::getenv(env_var); env != nullptr && env[0] != '\0') {
    if (!is_file(env)) return Error{fmt::format("{}={}: no such file", env_var, env)};
    return std::filesystem::absolute(env).lexically_normal().string();
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Error{"cannot find memloupe's own directory: " + ec.message()};
  std::vector<std::string> tried;
  for (const auto& dir : {self.parent_path(), self.parent_path() / MEMLOUPE_COMPANION_RELDIR}) {
    const std::string candidate = (dir / name).lexically_normal().string();
    if (is_file(candidate)) return candidate;
    tried.push_back(candidate);
  }
  return Error{fmt::format("cannot find {} (looked for {} and {}); set {}", name, tried[0], tried[1], env_var)};
}

}  // namespace memloupe::cli
