#include "cli/recorder_setup.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>

#include "analysis/query.h"

namespace memloupe::cli {
namespace {

bool is_file(const std::string& path) { return access(path.c_str(), R_OK) == 0; }

}  // namespace

Expected<std::string> find_recorder_library(const char* name, const char* env_override) {
  if (const char* env = std::getenv(env_override); env != nullptr && env[0] != '\0') {
    if (!is_file(env)) return Error{fmt::format("{}={}: no such file", env_override, env)};
    return std::filesystem::absolute(env).lexically_normal().string();
  }
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Error{"cannot find memloupe's own directory: " + ec.message()};
  std::vector<std::string> tried;
  for (const auto& dir : {self.parent_path(), self.parent_path() / ".." / "lib" / "memloupe"}) {
    const std::string candidate = (dir / name).lexically_normal().string();
    if (is_file(candidate)) return candidate;
    tried.push_back(candidate);
  }
  return Error{fmt::format("cannot find {} (looked for {} and {}); set {}", name, tried[0], tried[1], env_override)};
}

Expected<std::vector<std::pair<std::string, std::string>>> recorder_env(const SamplingOptions& o,
                                                                         const std::string& pattern) {
  std::vector<std::pair<std::string, std::string>> env;
  env.emplace_back("MEMLOUPE_OUTPUT", pattern);
  env.emplace_back("MEMLOUPE_FOLLOW_FORK", o.follow_fork ? "1" : "0");
  if (o.all) env.emplace_back("MEMLOUPE_MODE", "all");
  if (!o.every.empty()) {
    auto bytes = analysis::parse_size(o.every);
    if (!bytes) return Error{"--every: " + bytes.error().message};
    if (*bytes == 0) return Error{"--every: must be at least 1 byte"};
    env.emplace_back("MEMLOUPE_MODE", "sampled");
    env.emplace_back("MEMLOUPE_EVERY", std::to_string(*bytes));
  }
  if (o.rate != 0) {
    // A probability λ per byte samples one byte in 1/λ on average.
    if (!(o.rate > 0 && o.rate <= 1)) return Error{"--rate: must be in (0, 1]"};
    env.emplace_back("MEMLOUPE_MODE", "sampled");
    env.emplace_back("MEMLOUPE_EVERY", std::to_string(std::max<long long>(1, std::llround(1 / o.rate))));
  }
  if (o.depth != 0) env.emplace_back("MEMLOUPE_DEPTH", std::to_string(o.depth));
  return env;
}

}  // namespace memloupe::cli
