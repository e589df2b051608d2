// `memloupe live TRACE`: follows a trace while it is being written (by `memloupe
// run` or `memloupe attach`), refreshing every second: heap and RSS sparklines,
// the top sites by live bytes with their change since the last refresh, and the
// threads. Keys: s (sort: live, change, allocated), t (next thread), a (all
// threads), q (quit). When stdout is not a terminal it prints one line per
// refresh instead, and returns once the trace has ended.
//
// The loop itself is live_follow.cc (`memloupe run --live` uses it too).
#include <memory>

#include "cli/commands.h"
#include "cli/live_follow.h"

namespace memloupe::cli {
namespace {

struct LiveOptions {
  std::string trace;
  double interval = 1.0;
};

int live(const LiveOptions& o) {
  quit_live_on_signals();
  return follow_live(LiveFollow{o.trace, o.interval, {}});
}

}  // namespace

Command add_live_command(CLI::App& app) {
  auto o = std::make_shared<LiveOptions>();
  CLI::App* sub = app.add_subcommand("live", "Watch a trace while it is being written (memloupe live TRACE)");
  sub->add_option("trace", o->trace, "The trace being written")->required();
  sub->add_option("--interval", o->interval, "Seconds between refreshes")->check(CLI::Range(0.1, 60.0))->capture_default_str();
  return {sub, [o] { return live(*o); }};
}

}  // namespace memloupe::cli
