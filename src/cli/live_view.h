// `memloupe live`: what one refresh shows, taken from the model of the trace as
// far as it has been written, and its two renderings: the terminal screen and
// the one-line form used when stdout is not a terminal.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/model.h"
#include "symbolize/symbolizer.h"

namespace memloupe::cli {

enum class LiveSort { Live, Change, Allocated };
std::string_view live_sort_name(LiveSort s);

struct LiveSite {
  std::string key;   // the frame's identity, to follow the site across refreshes
  std::string name;  // function (file:line), or module+offset
  double live = 0, allocated = 0;
  double change = 0;  // live bytes since the previous refresh
};

struct LiveThread {
  uint32_t id = 0;
  std::string name;
  double live = 0, allocated = 0;
};

struct LiveState {
  std::string command;
  uint32_t pid = 0;
  uint64_t time_ns = 0;  // of the last event read
  bool ended = false;    // the trace has its TraceEnd
  double heap = 0, rss = 0;
  std::vector<double> heap_series, rss_series;
  std::vector<LiveSite> sites;  // every site; sorted by render
  std::vector<LiveThread> threads;
};

// Names frames the trace has no symbols for yet (it is still being written), with
// one libdw session per module kept across refreshes.
class LiveNamer {
 public:
  std::string name(const analysis::Overview& overview, const analysis::Frame& frame);

 private:
  // Quiet: a module without symbols just keeps its module+offset name.
  symbolize::Symbolizer symbolizer_{symbolize::SymbolizerOptions{.warn = [](const std::string&) {}}};
  std::map<uint64_t, std::string> cache_;
};

// `previous`: live bytes by site key at the previous refresh (updated).
LiveState live_state(const analysis::Model& model, std::map<std::string, double>& previous, LiveNamer& namer);

// Unicode block characters, one per column, the last `width` values scaled to their maximum.
std::string sparkline(std::span<const double> values, size_t width);

struct LiveScreen {
  LiveSort sort = LiveSort::Live;
  std::optional<uint32_t> thread;  // the threads' view is filtered to it
  int width = 100, height = 30;
};
std::string render_live_screen(const LiveState& state, const LiveScreen& screen);
std::string render_live_line(const LiveState& state);

}  // namespace memloupe::cli
