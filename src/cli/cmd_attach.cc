// `memloupe attach PID` / `memloupe detach PID`: records a process that is already
// running (docs/ATTACH.md), then finalises its trace as `memloupe run` does.
//
// `attach` waits until --duration has passed, Ctrl-C (SIGINT/SIGTERM), `memloupe
// detach PID`, or the process exits. `detach` finds the waiting `attach` through
// a file in the temporary directory naming its pid and asks it to stop (SIGINT),
// so that the trace is finalised by the command that knows where it is; with no
// attach waiting (it was killed), it ends the recording in the process itself.
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "analysis/query.h"
#include "attach/injector.h"
#include "cli/commands.h"
#include "cli/companion.h"
#include "cli/finalize_report.h"
#include "cli/recorder_setup.h"
#include "cli/run_output.h"

namespace memloupe::cli {
namespace {

constexpr const char* kLibraryEnv = "MEMLOUPE_ATTACH_LIBRARY";

struct AttachOptions : SamplingOptions {
  int pid = 0;
  std::string output;
  std::string duration;
  bool no_symbolize = false;
};

std::atomic<bool> g_stop{false};
void on_stop_signal(int) { g_stop.store(true); }

std::string attach_file(int pid) {
  return (std::filesystem::temp_directory_path() / fmt::format("memloupe-attach.{}.pid", pid)).string();
}

std::string comm_of(int pid) {
  std::ifstream in(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(in, name);
  return name;
}

// Gone, or a zombie its parent has not reaped: either way it runs no more code.
bool has_exited(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const size_t close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] == 'Z' || stat[close + 2] == 'X';
}

int attach(const AttachOptions& o) {
  std::optional<std::chrono::nanoseconds> duration;
  if (!o.duration.empty()) {
    auto t = analysis::parse_time(o.duration);
    if (!t || t->kind != analysis::TimeSpec::Kind::Absolute || t->value <= 0) {
      fmt::print(stderr, "memloupe: --duration {}: expected a time like 30s, 500ms or 2.5s\n", o.duration);
      return kUsage;
    }
    duration = std::chrono::nanoseconds(static_cast<int64_t>(t->value));
  }
  auto library = find_companion(kAttachLibraryName, kLibraryEnv);
  if (!library) {
    fmt::print(stderr, "memloupe: {}\n", library.error().message);
    return kFailed;
  }
  const std::string name = comm_of(o.pid);
  auto plan = plan_output(o.output, name.empty() ? "process" : name, /*follow_fork=*/false);
  if (!plan) {
    fmt::print(stderr, "memloupe: {}\n", plan.error().message);
    return kUsage;
  }
  SamplingOptions sampling = o;
  sampling.follow_fork = false;
  auto env = recorder_env(sampling, plan->pattern);
  if (!env) {
    fmt::print(stderr, "memloupe: {}\n", env.error().message);
    return kUsage;
  }
  std::string config;
  for (const auto& [k, v] : *env) config += k + "=" + v + "\n";
  const std::string raw = expand(plan->pattern, o.pid);
  const std::string final_path = plan->fixed_output.value_or(raw);

  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  const std::string marker = attach_file(o.pid);
  { std::ofstream(marker) << ::getpid() << "\n"; }
  struct RemoveMarker {
    std::string path;
    ~RemoveMarker() { std::remove(path.c_str()); }
  } remove_marker{marker};

  if (auto started = attach::start_recording(o.pid, *library, config); !started) {
    fmt::print(stderr, "memloupe: {}\n", started.error().message);
    return kFailed;
  }
  fmt::print(stderr, "memloupe: recording process {} ({}) into {}; stop with Ctrl-C or `memloupe detach {}`\n",
             o.pid, name, raw, o.pid);
  const auto until = duration ? std::chrono::steady_clock::now() + *duration : std::chrono::steady_clock::time_point::max();
  bool exited = false;
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    if ((exited = has_exited(o.pid))) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (exited) {
    fmt::print(stderr, "memloupe: process {} exited; its trace ended with it\n", o.pid);
  } else if (auto stopped = attach::stop_recording(o.pid, *library); !stopped) {
    fmt::print(stderr, "memloupe: {}\n", stopped.error().message);
    if (has_exited(o.pid)) fmt::print(stderr, "memloupe: the trace has what was written before it exited\n");
    else return kFailed;
  }
  if (o.no_symbolize) return report_unfinalized(raw);
  const int rc = finalize_and_report(raw, final_path, finalize::FinalizeOptions{});
  if (raw != final_path && rc != kFailed) std::remove(raw.c_str());
  return rc;
}

int detach(int pid) {
  int waiting = 0;
  { std::ifstream(attach_file(pid)) >> waiting; }
  if (waiting > 0 && comm_of(waiting).rfind("memloupe", 0) == 0 && ::kill(waiting, SIGINT) == 0) {
    fmt::print(stderr, "memloupe: asked the attach (process {}) to stop recording process {}\n", waiting, pid);
    while (!has_exited(waiting)) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return kOk;
  }
  auto library = find_companion(kAttachLibraryName, kLibraryEnv);
  if (!library) {
    fmt::print(stderr, "memloupe: {}\n", library.error().message);
    return kFailed;
  }
  if (auto stopped = attach::stop_recording(pid, *library); !stopped) {
    fmt::print(stderr, "memloupe: {}\n", stopped.error().message);
    return kFailed;
  }
  fmt::print(stderr, "memloupe: stopped recording process {}; no attach was waiting to finalise the trace "
                     "(finalise it with `memloupe symbolize`)\n", pid);
  return kOk;
}

}  // namespace

Command add_attach_command(CLI::App& app) {
  auto o = std::make_shared<AttachOptions>();
  CLI::App* sub = app.add_subcommand("attach", "Record a running process (memloupe attach [options] PID)");
  sub->add_option("pid", o->pid, "The process to record")->required();
  sub->add_option("-o,--output", o->output,
                  "Trace file (default: memloupe.NAME.PID.trace here; %p in the name = the pid)");
  add_sampling_options(*sub, *o, "Record every allocation call (blocks allocated before the attach stay unknown)");
  sub->add_option("--duration", o->duration, "Stop after this long (30s, 2.5s, 500ms); default: Ctrl-C or detach");
  sub->add_flag("--no-symbolize", o->no_symbolize, "Leave the trace as recorded");
  return {sub, [o] { return attach(*o); }};
}

Command add_detach_command(CLI::App& app) {
  auto pid = std::make_shared<int>(0);
  CLI::App* sub = app.add_subcommand("detach", "Stop recording a process `memloupe attach` is recording");
  sub->add_option("pid", *pid, "The recorded process")->required();
  return {sub, [pid] { return detach(*pid); }};
}

}  // namespace memloupe::cli
