#include "cli/text_options.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

namespace memloupe::cli {

void add_rank_options(CLI::App* sub, RankOptions& o, bool with_by) {
  if (with_by) {
    sub->add_option("--by", o.by, "Rank by: allocated, count, live, peak, leaked, freed, temporary")
        ->check(CLI::IsMember({"allocated", "count", "live", "peak", "leaked", "freed", "temporary"}))
        ->capture_default_str();
    sub->add_flag("--blocks", o.blocks, "Rank by number of blocks rather than bytes");
  }
  add_depth_option(sub, o.depth);
  sub->add_option("--group", o.group, "Identify frames by function, line or address")
      ->check(CLI::IsMember({"function", "line", "address"}))
      ->capture_default_str();
  add_limit_option(sub, o.limit);
  add_frames_option(sub, o.frames, o.all_frames);
  sub->add_option("--min-count", o.min_count, "Drop sites with fewer blocks than this")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  add_output_flags(sub, o.csv, o.json, "Machine-readable output (CSV, with interval bounds)");
  add_full_names_flag(sub, o.full_names);
}

void add_depth_option(CLI::App* sub, uint32_t& depth) {
  sub->add_option("--depth", depth, "Group sites by their innermost N frames (0: the whole stack)")
      ->capture_default_str();
}

void add_limit_option(CLI::App* sub, size_t& limit) {
  sub->add_option("-n,--limit", limit, "Rows per table (0: all)")->check(CLI::NonNegativeNumber)->capture_default_str();
  sub->add_option("--top", limit)->check(CLI::NonNegativeNumber)->group("");
}

void add_frames_option(CLI::App* sub, size_t& frames, bool& all_frames) {
  sub->add_option("--frames", frames, "Backtrace lines per site (0: all)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  sub->add_flag("--all-frames", all_frames,
                "Start backtraces at the allocation, not at the first frame outside the allocator and "
                "standard library");
}

void add_output_flags(CLI::App* sub, bool& csv, bool& json, const std::string& csv_help) {
  auto* c = sub->add_flag("--csv", csv, csv_help);
  auto* j = sub->add_flag("--json", json, "Machine-readable output (JSON, with interval bounds)");
  c->excludes(j);
}

void add_full_names_flag(CLI::App* sub, bool& full_names) {
  sub->add_flag("--full-names", full_names,
                "Print C++ function names whole (default: template arguments as <…>, parameters as ())");
}

report::TopOptions top_options(const RankOptions& o) {
  report::TopOptions t;
  t.key = *sort_key(o);  // --by is checked by the parser
  t.depth = o.depth;
  t.limit = o.limit;
  t.frames = o.frames;
  t.all_frames = o.all_frames;
  t.min_count = o.min_count;
  t.csv = o.csv;
  t.json = o.json;
  t.width = table_width();
  t.full_names = o.full_names;
  return t;
}

std::optional<analysis::SortKey> sort_key(const RankOptions& o) {
  if (o.by == "count") return analysis::SortKey{analysis::Metric::Allocated, true};
  const std::optional<analysis::Metric> m = analysis::metric_from_name(o.by);
  if (!m) return std::nullopt;
  return analysis::SortKey{*m, o.blocks};
}

std::optional<analysis::Grouping> grouping(const std::string& name) {
  if (name == "function") return analysis::Grouping::Function;
  if (name == "line") return analysis::Grouping::Line;
  if (name == "address") return analysis::Grouping::Address;
  return std::nullopt;
}

size_t terminal_width() {
  if (const char* columns = std::getenv("COLUMNS")) {
    const long n = std::strtol(columns, nullptr, 10);
    if (n > 20 && n < 1000) return static_cast<size_t>(n);
  }
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20) return ws.ws_col;
  return 80;
}

size_t table_width() { return ::isatty(STDOUT_FILENO) ? terminal_width() : 0; }

}  // namespace memloupe::cli
