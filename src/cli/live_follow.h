// The live view's loop, shared by `memloupe live TRACE` and `memloupe run
// --live`: re-reads the trace every interval and shows it (the terminal screen
// with keys, or one text line per refresh when stdout is not a terminal).
#pragma once

#include <functional>
#include <string>

namespace memloupe::cli {

struct LiveFollow {
  std::string trace;
  double interval = 1.0;  // seconds between refreshes
  // Under `memloupe run --live`: whether the program writing the trace has
  // exited. The text form then also returns once it has (a killed program's
  // trace has no end), the screen says so and waits for q. Empty for `live`.
  std::function<bool()> program_exited;
};

// Ctrl-C and SIGTERM end follow_live (for `memloupe live`; under `run` those
// signals are the program's and the launcher forwards them).
void quit_live_on_signals();

// Until q, a quit signal, or (text form) the end of the trace. Returns kOk.
int follow_live(const LiveFollow& o);

}  // namespace memloupe::cli
