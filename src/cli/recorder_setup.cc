#include "cli/recorder_setup.h"

#include <algorithm>
#include <cmath>

#include "analysis/query.h"
#include "format/encoder.h"
#include "format/signal_names.h"
#include "format/wire.h"

namespace memloupe::cli {
namespace {

// --every: a size of at least one byte.
const CLI::Validator kEveryBytes(
    [](std::string& text) -> std::string {
      auto bytes = analysis::parse_size(text);
      if (!bytes) return bytes.error().message;
      return *bytes == 0 ? "must be at least 1 byte" : "";
    },
    "SIZE");

// --rate: a probability per byte, so in (0, 1]; 0 would mean "never sample",
// which is not a sampled mode (the default used to be taken silently).
const CLI::Validator kRate(
    [](std::string& text) -> std::string {
      double rate = 0;
      if (!CLI::detail::lexical_cast(text, rate)) return "not a number: " + text;
      return rate > 0 && rate <= 1 ? "" : "must be in (0, 1], not " + text;
    },
    "(0,1]");

// --time-unit: what the encoder writes (format::encodable_time_unit), so that
// the trace has the unit asked for.
const CLI::Validator kTimeUnit(
    [](std::string& text) -> std::string {
      uint64_t us = 0;
      if (!CLI::detail::lexical_cast(text, us)) return "not a whole number of microseconds: " + text;
      return us != 0 && us == format::encodable_time_unit(us)
                 ? ""
                 : "must be a power of two from 1 to " + std::to_string(format::kMaxTimeUnitUs) + " µs, not " + text;
    },
    "MICROSECONDS");

}  // namespace

void add_sampling_options(CLI::App& sub, SamplingOptions& o, const std::string& all_help) {
  auto* all = sub.add_flag("--all", o.all, all_help);
  sub.add_flag("--addresses", o.addresses,
               "With --all: store every block's address in the trace (larger; for allocator studies)")
      ->needs(all);
  auto* every = sub.add_option("--every", o.every, "Mean bytes allocated between samples: 512KiB, 1MiB, 4096, ...")
                    ->check(kEveryBytes);
  auto* rate = sub.add_option("--rate", o.rate, "Sampling probability per byte (1/--every)")->check(kRate);
  all->excludes(every, rate);
  every->excludes(rate);
  sub.add_option("--depth", o.depth, "Backtrace depth limit in frames")->check(CLI::Range(1, 256));
  sub.add_option("--time-unit", o.time_unit_us,
                 "Microseconds per tick of the trace's event times, a power of two (default: 32 with --all, else 1)")
      ->check(kTimeUnit);
}

Expected<std::vector<std::pair<std::string, std::string>>> recorder_env(const SamplingOptions& o,
                                                                         const std::string& pattern) {
  std::vector<std::pair<std::string, std::string>> env;
  env.emplace_back("MEMLOUPE_OUTPUT", pattern);
  env.emplace_back("MEMLOUPE_FOLLOW_FORK", o.follow_fork ? "1" : "0");
  env.emplace_back("MEMLOUPE_FOLLOW_EXEC", o.no_follow_exec ? "0" : "1");
  // The recorder sets it for the images a traced process execs (exec_follow.h);
  // one left in memloupe's own environment (memloupe run under a traced
  // process) would make the launched program think itself a descendant.
  env.emplace_back("MEMLOUPE_SESSION_PID", "");
  if (o.all) env.emplace_back("MEMLOUPE_MODE", "all");
  if (o.addresses) env.emplace_back("MEMLOUPE_ADDRESSES", "1");
  if (!o.every.empty()) {
    auto bytes = analysis::parse_size(o.every);  // checked by the parser (kEveryBytes)
    if (!bytes) return Error{"--every: " + bytes.error().message};
    env.emplace_back("MEMLOUPE_MODE", "sampled");
    env.emplace_back("MEMLOUPE_EVERY", std::to_string(*bytes));
  }
  if (o.rate) {
    // A probability λ per byte samples one byte in 1/λ on average.
    env.emplace_back("MEMLOUPE_MODE", "sampled");
    env.emplace_back("MEMLOUPE_EVERY", std::to_string(std::max<long long>(1, std::llround(1 / *o.rate))));
  }
  if (o.depth != 0) env.emplace_back("MEMLOUPE_DEPTH", std::to_string(o.depth));
  if (o.time_unit_us != 0) env.emplace_back("MEMLOUPE_TIME_UNIT", std::to_string(o.time_unit_us));
  if (!o.snapshot_signal.empty()) {
    // Heap snapshots need every block's address (docs/RETENTION.md).
    if (!o.all) return Error{"--snapshot-signal: heap snapshots need --all"};
    const auto sig = format::parse_signal(o.snapshot_signal);
    if (!sig) return Error{"--snapshot-signal: '" + o.snapshot_signal + "' is not a signal a snapshot can be taken on (try USR2)"};
    env.emplace_back("MEMLOUPE_SNAPSHOT_SIGNAL", std::to_string(*sig));
  }
  return env;
}

}  // namespace memloupe::cli
