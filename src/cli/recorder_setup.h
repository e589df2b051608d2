// What `memloupe run` and `memloupe attach` share about the recorder: its
// library's name, the sampling options (one set of flags and checks for both),
// and the recorder's configuration from them.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "format/expected.h"

namespace memloupe::cli {

// Found with find_companion (companion.h).
inline constexpr const char* kPreloadName = "libmemloupe_preload.so";
// The same recorder with dynamic TLS, for loading into a running process.
inline constexpr const char* kAttachLibraryName = "libmemloupe_attach.so";

struct SamplingOptions {
  bool all = false;
  bool addresses = false;  // --addresses: --all traces keep every block's address
  uint32_t time_unit_us = 0;  // --time-unit: µs per tick of the event times; 0: the recorder's default
  std::string every;
  std::optional<double> rate;
  uint32_t depth = 0;
  bool follow_fork = false;
  bool no_follow_exec = false;
  std::string snapshot_signal;
};

// --all, --every, --rate and --depth with their bounds checked by the parser.
void add_sampling_options(CLI::App& sub, SamplingOptions& o, const std::string& all_help);

// The recorder's MEMLOUPE_* variables for `options`, writing to `pattern`
// (docs/RUNNING.md lists them). Unset options leave any MEMLOUPE_* already in
// the environment in force, except MEMLOUPE_FOLLOW_FORK, which the launcher
// must agree with.
Expected<std::vector<std::pair<std::string, std::string>>> recorder_env(const SamplingOptions& options,
                                                                         const std::string& pattern);

}  // namespace memloupe::cli
