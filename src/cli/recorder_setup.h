// What `memloupe run` and `memloupe attach` share about the recorder: finding its
// library, and its configuration from the sampling options.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "format/expected.h"

namespace memloupe::cli {

inline constexpr const char* kPreloadName = "libmemloupe_preload.so";
// The same recorder with dynamic TLS, for loading into a running process.
inline constexpr const char* kAttachLibraryName = "libmemloupe_attach.so";

// `env_override` (MEMLOUPE_PRELOAD, MEMLOUPE_ATTACH_LIBRARY) if set, else `name`
// next to this executable (the build puts both in <build>/bin/), else
// ../lib/memloupe/ relative to it (an installed layout). Absolute.
Expected<std::string> find_recorder_library(const char* name, const char* env_override);

struct SamplingOptions {
  bool all = false;
  std::string every;
  double rate = 0;
  uint32_t depth = 0;
  bool follow_fork = false;
};

// The recorder's MEMLOUPE_* variables for `options`, writing to `pattern`
// (docs/RUNNING.md lists them). Unset options leave any MEMLOUPE_* already in
// the environment in force, except MEMLOUPE_FOLLOW_FORK, which the launcher
// must agree with.
Expected<std::vector<std::pair<std::string, std::string>>> recorder_env(const SamplingOptions& options,
                                                                         const std::string& pattern);

}  // namespace memloupe::cli
