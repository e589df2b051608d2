// `memloupe run [options] -- PROGRAM ARGS...`: runs a program with the preload
// library, then finalises its trace(s). docs/RUNNING.md describes the rules;
// run_launch.h the process handling, run_output.h the file names.
#include <fmt/format.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "analysis/query.h"
#include "cli/commands.h"
#include "cli/companion.h"
#include "cli/finalize_report.h"
#include "cli/run_exec_chain.h"
#include "cli/run_launch.h"
#include "cli/run_output.h"
#include "cli/run_static_check.h"
#include "format/signal_names.h"

namespace memloupe::cli {
namespace {

constexpr const char* kPreloadName = "libmemloupe_preload.so";

struct RunOptions {
  std::string output;
  bool all = false;
  std::string every;
  std::optional<double> rate;
  uint32_t depth = 0;
  bool follow_fork = false;
  bool no_follow_exec = false;
  bool no_symbolize = false;
  std::string snapshot_signal;
  std::vector<std::string> command;
};

// MEMLOUPE_PRELOAD, else beside this executable (companion.h).
Expected<std::string> find_preload() { return find_companion(kPreloadName, "MEMLOUPE_PRELOAD"); }

// The dynamic loader splits LD_PRELOAD at spaces and colons. Ours goes first
// so its hooks see every call; an allocator the user preloads (jemalloc...)
// comes after it and is what the hooks' "real" functions then resolve to.
Expected<std::string> ld_preload_with(const std::string& library) {
  if (library.find_first_of(" :") != std::string::npos) {
    return Error{"the preload library's path " + library + " contains a space or colon, "
                 "which LD_PRELOAD cannot express"};
  }
  const char* existing = std::getenv("LD_PRELOAD");
  return existing != nullptr && existing[0] != '\0' ? library + ":" + existing : library;
}

// The recorder's configuration, from the options (docs/RUNNING.md lists the
// variables). Unset options leave any MEMLOUPE_* already in the environment in
// force, except MEMLOUPE_FOLLOW_FORK, which the launcher must agree with.
Expected<std::vector<std::pair<std::string, std::string>>> recorder_env(const RunOptions& o,
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
  if (!o.every.empty()) {
    auto bytes = analysis::parse_size(o.every);  // checked by the parser (every_bytes)
    env.emplace_back("MEMLOUPE_MODE", "sampled");
    env.emplace_back("MEMLOUPE_EVERY", std::to_string(*bytes));
  }
  if (o.rate) {
    // A probability λ per byte samples one byte in 1/λ on average.
    env.emplace_back("MEMLOUPE_MODE", "sampled");
    env.emplace_back("MEMLOUPE_EVERY", std::to_string(std::max<long long>(1, std::llround(1 / *o.rate))));
  }
  if (o.depth != 0) env.emplace_back("MEMLOUPE_DEPTH", std::to_string(o.depth));
  if (!o.snapshot_signal.empty()) {
    // Heap snapshots need every block's address (docs/RETENTION.md).
    if (!o.all) return Error{"--snapshot-signal: heap snapshots need --all"};
    const auto sig = format::parse_signal(o.snapshot_signal);
    if (!sig) return Error{"--snapshot-signal: '" + o.snapshot_signal + "' is not a signal a snapshot can be taken on (try USR2)"};
    env.emplace_back("MEMLOUPE_SNAPSHOT_SIGNAL", std::to_string(*sig));
  }
  return env;
}

void say_missing(const std::string& path) {
  fmt::print(stderr,
             "memloupe: no trace was written to {} (the program may have removed LD_PRELOAD or "
             "MEMLOUPE_OUTPUT from its environment, or recording failed; see any message above)\n",
             path);
}

// After the program exited: finalise (or just report) what it wrote.
void finish_traces(const RunOptions& o, const OutputPlan& plan, const TraceFiles& before, int pid) {
  const std::string main_raw = expand(plan.pattern, pid);
  const std::string main_final = plan.fixed_output.value_or(main_raw);
  symbolize::FinalizeOptions finalize;
  const auto finish = [&](const std::string& raw, const std::string& final_path) {
    if (!o.no_symbolize) {
      finalize_and_report(raw, final_path, finalize);
      if (raw != final_path) std::remove(raw.c_str());
    } else {
      if (raw != final_path && std::rename(raw.c_str(), final_path.c_str()) != 0) {
        fmt::print(stderr, "memloupe: cannot rename {} to {}: {}\n", raw, final_path, std::strerror(errno));
        return;
      }
      report_unfinalized(final_path);
    }
  };

  if (!before.written(main_raw)) {
    say_missing(main_raw);
    return;
  }
  // The launched image, then each image it exec'd in turn (run_exec_chain.h).
  std::set<std::string> chain;
  std::string last = main_final;
  for (unsigned n = 0;; ++n) {
    const std::string raw = exec_chain_path(main_raw, n);
    if (n > 0 && (o.no_follow_exec || !before.written(raw))) break;
    last = exec_chain_path(main_final, n);
    if (n > 0) fmt::print(stderr, "memloupe: the program exec'd another; its trace follows\n");
    finish(raw, last);
    chain.insert(raw);
  }
  if (auto warning = exec_end_warning(last, !o.no_follow_exec)) {
    fmt::print(stderr, "memloupe: warning: {}\n", *warning);
  }
  if (!o.follow_fork) return;
  for (const std::string& child : before.written_since()) {
    if (!chain.contains(child)) finish(child, child);
  }
}

int run(const RunOptions& o) {
  if (const auto program = find_program(o.command[0])) {
    if (const auto file = static_executable(*program)) {
      fmt::print(stderr, "memloupe: {}: static binary: LD_PRELOAD cannot work{}\n", o.command[0],
                 *file == *program ? "" : " (its interpreter " + *file + " is statically linked)");
      return kFailed;
    }
  }
  auto preload = find_preload();
  if (!preload) {
    fmt::print(stderr, "memloupe: {}\n", preload.error().message);
    return kFailed;
  }
  auto plan = plan_output(o.output, o.command[0], o.follow_fork);
  if (!plan) {
    fmt::print(stderr, "memloupe: {}\n", plan.error().message);
    return kUsage;
  }
  auto env = recorder_env(o, plan->pattern);
  auto ld_preload = ld_preload_with(*preload);
  for (const Error* e : {env ? nullptr : &env.error(), ld_preload ? nullptr : &ld_preload.error()}) {
    if (e == nullptr) continue;
    fmt::print(stderr, "memloupe: {}\n", e->message);
    return kUsage;
  }
  env->emplace_back("LD_PRELOAD", *ld_preload);

  const TraceFiles before(plan->pattern);
  const LaunchResult result = launch_and_wait({o.command, *env});
  if (!result.started) {
    fmt::print(stderr, "memloupe: cannot run {}: {}\n", o.command[0], std::strerror(result.exec_errno));
    return result.status;
  }
  finish_traces(o, *plan, before, result.pid);
  return result.status;
}

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

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run a program under memloupe and write its trace (memloupe run [options] -- PROGRAM ARGS...)");
  sub->add_option("-o,--output", o->output,
                  "Trace file (default: memloupe.PROGRAM.PID.trace here; %p in the name = the pid)");
  auto* all = sub->add_flag("--all", o->all, "Record every allocation call, with addresses");
  auto* every = sub->add_option("--every", o->every,
                                "Mean bytes allocated between samples: 512KiB, 1MiB, 4096, ...")
                    ->check(kEveryBytes);
  auto* rate = sub->add_option("--rate", o->rate, "Sampling probability per byte (1/--every)")->check(kRate);
  all->excludes(every, rate);
  every->excludes(rate);
  sub->add_option("--depth", o->depth, "Backtrace depth limit in frames")->check(CLI::Range(1, 256));
  sub->add_flag("--follow-fork", o->follow_fork, "Trace forked children too, each into its own file");
  sub->add_flag("--no-follow-exec", o->no_follow_exec,
                "End the trace when the program execs another (default: the exec'd program is traced "
                "too, into TRACE.1, TRACE.2, ...)");
  sub->add_flag("--no-symbolize", o->no_symbolize,
                "Leave the trace as recorded (symbolise later with `memloupe symbolize`)");
  sub->add_option("--snapshot-signal", o->snapshot_signal,
                  "Take a heap snapshot whenever the program gets this signal (USR2, ...; needs --all; "
                  "`memloupe snapshot PID` sends it)");
  sub->add_option("command", o->command, "The program and its arguments")->required();
  // Everything from the program's name on is the program's, options included.
  sub->positionals_at_end();
  return {sub, [o] { return run(*o); }};
}

}  // namespace memloupe::cli
