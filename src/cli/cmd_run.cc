// `memloupe run [options] -- PROGRAM ARGS...`: runs a program with the preload
// library, then finalises its trace(s). docs/RUNNING.md describes the rules;
// run_launch.h the process handling, run_output.h the file names.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/companion.h"
#include "cli/finalize_report.h"
#include "cli/recorder_setup.h"
#include "cli/run_exec_chain.h"
#include "cli/run_launch.h"
#include "cli/run_live.h"
#include "cli/run_output.h"
#include "cli/run_static_check.h"
#include "finalize/kept_until_exit.h"
#include "finalize/memory_after_exit.h"

namespace memloupe::cli {
namespace {

struct RunOptions : SamplingOptions {
  std::string output;
  bool no_symbolize = false;
  bool index = false;  // --index: one even for a small trace (analysis/index.h)
  bool live = false;
  std::vector<std::string> command;
};

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

void say_missing(const std::string& path) {
  fmt::print(stderr,
             "memloupe: no trace was written to {} (the program may have removed LD_PRELOAD or "
             "MEMLOUPE_OUTPUT from its environment, or recording failed; see any message above)\n",
             path);
}

analysis::IndexWhen index_when(const RunOptions& o) {
  return o.index ? analysis::IndexWhen::Always : analysis::IndexWhen::IfItPays;
}

// After the program exited: finalise (or just report) what it wrote.
// `following`: the launched program's trace, followed while it ran.
void finish_traces(const RunOptions& o, const OutputPlan& plan, const TraceFiles& before, int pid,
                   FollowingFinaliser* following) {
  const std::string main_raw = expand(plan.pattern, pid);
  const std::string main_final = plan.fixed_output.value_or(main_raw);
  finalize::FinalizeOptions finalize;
  // How the trace finish() last wrote ended, when its finalising saw every event it
  // keeps (nullptr: unknown; trace_end_reason then reads the file).
  const std::optional<format::EndReason>* known_end = nullptr;
  const auto finish = [&](const std::string& raw, const std::string& final_path) {
    known_end = nullptr;
    if (!o.no_symbolize) {
      if (following && following->raw() == raw) {
        following->finish(final_path);
        known_end = following->end_reason();
      } else {
        finalize_and_report(raw, final_path, finalize, index_when(o));
      }
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
  // (The index just written is not decoded again for it: ~10% of what was
  // left after the exit of a program with ~70 k stacks, docs/RECORDER.md.)
  const std::optional<format::EndReason> last_end = known_end ? *known_end : trace_end_reason(last);
  if (auto warning = exec_end_warning(last, last_end, !o.no_follow_exec)) {
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
  auto preload = find_companion(kPreloadName, "MEMLOUPE_PRELOAD");
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
  LaunchRequest request{o.command, *env};
  RunLive live;
  if (o.live) {
    if (auto ready = live.prepare(request, *plan, 1.0); !ready) {
      fmt::print(stderr, "memloupe: {}\n", ready.error().message);
      return kFailed;
    }
  }
  // The finaliser reads the launched program's trace while it is written
  // (finalize_report.h), from before the live view (if any) takes over; the
  // other traces (exec'd images, forked children) are read once the program
  // has exited.
  std::unique_ptr<FollowingFinaliser> following;
  if (!o.no_symbolize) {
    request.while_running = [&, then = std::move(request.while_running)](int pid) {
      const std::string raw = expand(plan->pattern, pid);
      following = std::make_unique<FollowingFinaliser>(raw, [&before, raw] { return before.written(raw); }, index_when(o));
      if (then) then(pid);
    };
  }
  const LaunchResult result = launch_and_wait(request);
  if (o.live) live.report();
  if (!result.started) {
    fmt::print(stderr, "memloupe: cannot run {}: {}\n", o.command[0], std::strerror(result.exec_errno));
    return result.status;
  }
  finish_traces(o, *plan, before, result.pid, following.get());
  // The analysis index's and the types' tables: the process exits now, and
  // its pages are freed by a helper after the exit (memory_after_exit.h).
  if (following) {
    finalize::keep_until_exit(std::move(following));
    finalize::free_memory_after_exit();
  }
  return result.status;
}

}  // namespace

Command add_run_command(CLI::App& app) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* sub = app.add_subcommand(
      "run", "Run a program under memloupe and write its trace (memloupe run [options] -- PROGRAM ARGS...)");
  sub->add_option("-o,--output", o->output,
                  "Trace file (default: memloupe.PROGRAM.PID.trace here; %p in the name = the pid)");
  add_sampling_options(*sub, *o, "Record every allocation call (block addresses: --addresses)");
  sub->add_flag("--follow-fork", o->follow_fork, "Trace forked children too, each into its own file");
  sub->add_flag("--no-follow-exec", o->no_follow_exec,
                "End the trace when the program execs another (default: the exec'd program is traced "
                "too, into TRACE.1, TRACE.2, ...)");
  sub->add_flag("--no-symbolize", o->no_symbolize,
                "Leave the trace as recorded (symbolise later with `memloupe symbolize`)");
  sub->add_flag("--index", o->index, index_flag_help());
  sub->add_option("--snapshot-signal", o->snapshot_signal,
                  "Take a heap snapshot whenever the program gets this signal (USR2, ...; needs --all; "
                  "`memloupe snapshot PID` sends it)");
  sub->add_flag("--live", o->live,
                "Watch the trace live while the program runs (memloupe live's view; the program's stdin "
                "is /dev/null and its output goes to TRACE.out)");
  sub->add_option("command", o->command, "The program and its arguments")->required();
  // Everything from the program's name on is the program's, options included.
  sub->positionals_at_end();
  return {sub, [o] { return run(*o); }};
}

}  // namespace memloupe::cli
