// Each refresh re-reads the trace from the start (the analysis has no
// incremental mode): fine for the minutes a live view is watched; a long trace
// makes refreshes slower, never wrong. Frames are named through libdw as the
// trace has no symbols until it is finalised.
#include "cli/live_follow.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>

#include "analysis/model.h"
#include "cli/commands.h"
#include "cli/live_view.h"

namespace memloupe::cli {
namespace {

std::atomic<bool> g_quit{false};
void on_quit_signal(int) { g_quit.store(true); }

// Raw keys, no echo, the alternate screen and no cursor while alive.
class TerminalMode {
 public:
  TerminalMode() {
    tcgetattr(STDIN_FILENO, &saved_);
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    tcsetattr(STDIN_FILENO, TCSANOW, &raw);
    std::fputs("\x1b[?1049h\x1b[?25l", stdout);
  }
  ~TerminalMode() {
    std::fputs("\x1b[?25h\x1b[?1049l", stdout);
    std::fflush(stdout);
    tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }

 private:
  termios saved_{};
};

// The next key within `timeout`, or 0.
char wait_key(std::chrono::milliseconds timeout) {
  pollfd p{STDIN_FILENO, POLLIN, 0};
  if (::poll(&p, 1, static_cast<int>(timeout.count())) <= 0) return 0;
  char c = 0;
  return ::read(STDIN_FILENO, &c, 1) == 1 ? c : 0;
}

}  // namespace

void quit_live_on_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_quit_signal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int follow_live(const LiveFollow& o) {
  const bool terminal = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO);
  const auto interval = std::chrono::milliseconds(static_cast<int64_t>(o.interval * 1000));
  std::unique_ptr<TerminalMode> mode;
  if (terminal) mode = std::make_unique<TerminalMode>();

  LiveNamer namer;
  std::map<std::string, double> previous;
  LiveScreen screen;
  std::string waiting_reason;
  while (!g_quit.load()) {
    // Read before the trace: a program seen exited has written all it will.
    const bool exited = o.program_exited && o.program_exited();
    analysis::QueryArgs args;
    args.thread = screen.thread;
    auto model = analysis::analyze_file(o.trace, args, {}, analysis::UseIndex::Never);
    std::optional<LiveState> state;
    if (model) {
      state = live_state(*model, previous, namer);
    } else {
      waiting_reason = model.error().message;  // not there yet, or no header yet
    }
    if (terminal) {
      winsize ws{};
      if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) screen.width = ws.ws_col, screen.height = ws.ws_row;
      std::string body = state ? render_live_screen(*state, screen)
                               : fmt::format("memloupe live: waiting for {} ({})\n", o.trace, waiting_reason);
      if (exited) body += "the program has exited: q to finish\n";
      std::fputs("\x1b[H\x1b[2J", stdout);
      std::fputs(body.c_str(), stdout);
      std::fflush(stdout);
      const auto until = std::chrono::steady_clock::now() + interval;
      for (auto now = std::chrono::steady_clock::now(); now < until && !g_quit.load(); now = std::chrono::steady_clock::now()) {
        const char key = wait_key(std::chrono::duration_cast<std::chrono::milliseconds>(until - now));
        if (key == 'q' || key == 'Q') return kOk;
        if (key == 's') screen.sort = static_cast<LiveSort>((static_cast<int>(screen.sort) + 1) % 3);
        if (key == 'a') screen.thread.reset();
        if (key == 't' && state && !state->threads.empty()) {
          // The next thread id after the one picked, wrapping to all threads.
          std::optional<uint32_t> next;
          for (const LiveThread& t : state->threads)
            if ((!screen.thread || t.id > *screen.thread) && (!next || t.id < *next)) next = t.id;
          screen.thread = next;
        }
        if (key != 0) break;  // redraw at once
      }
    } else {
      if (state) std::fputs(render_live_line(*state).c_str(), stdout);
      std::fflush(stdout);
      if ((state && state->ended) || exited) return kOk;
      std::this_thread::sleep_for(interval);
    }
  }
  return kOk;
}

}  // namespace memloupe::cli
