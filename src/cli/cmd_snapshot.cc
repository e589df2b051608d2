// `memloupe snapshot PID`: asks a process running under `memloupe run --all
// --snapshot-signal SIG` for a heap snapshot, by sending it that signal (read
// from its environment, MEMLOUPE_SNAPSHOT_SIGNAL, unless --signal says).
#include <fmt/format.h>
#include <signal.h>
#include <sys/types.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "format/signal_names.h"

namespace memloupe::cli {
namespace {

struct SnapshotOptions {
  pid_t pid = 0;
  std::string signal;
};

// The value of `name` in /proc/PID/environ (the environment the process
// started with), if it is there.
std::optional<std::string> start_environment(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), {});
  const std::string key = name + "=";
  for (size_t at = 0; at < all.size();) {
    const size_t end = std::min(all.find('\0', at), all.size());
    if (all.compare(at, key.size(), key) == 0) return all.substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  return std::nullopt;
}

int send(const SnapshotOptions& o) {
  std::string text = o.signal;
  if (text.empty()) {
    const auto configured = start_environment(o.pid, "MEMLOUPE_SNAPSHOT_SIGNAL");
    if (!configured) {
      fmt::print(stderr,
                 "memloupe: process {} was not started with --snapshot-signal (no MEMLOUPE_SNAPSHOT_SIGNAL "
                 "in /proc/{}/environ, or it cannot be read); name the signal with --signal\n",
                 o.pid, o.pid);
      return kUsage;
    }
    text = *configured;
  }
  const auto sig = format::parse_signal(text);
  if (!sig) {
    fmt::print(stderr, "memloupe: '{}' is not a signal a snapshot can be taken on\n", text);
    return kUsage;
  }
  if (::kill(o.pid, *sig) != 0) {
    fmt::print(stderr, "memloupe: cannot signal process {}: {}\n", o.pid, std::strerror(errno));
    return kFailed;
  }
  fmt::print("asked process {} for a heap snapshot (signal {})\n", o.pid, *sig);
  return kOk;
}

}  // namespace

Command add_snapshot_command(CLI::App& app) {
  auto o = std::make_shared<SnapshotOptions>();
  CLI::App* sub = app.add_subcommand(
      "snapshot", "Ask a process started with `memloupe run --all --snapshot-signal SIG` for a heap snapshot");
  sub->add_option("pid", o->pid, "The process")->required()->check(CLI::PositiveNumber);
  sub->add_option("--signal", o->signal, "The signal to send (default: the one the process was started with)");
  return {sub, [o] { return send(*o); }};
}

}  // namespace memloupe::cli
