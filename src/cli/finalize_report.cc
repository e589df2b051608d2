#include "cli/finalize_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>

#include "analysis/index.h"
#include "cli/commands.h"
#include "cli/progress_line.h"
#include "reader/reader.h"
#include "types/finalize_types.h"

namespace memloupe::cli {
namespace {

void print_wrote(const std::string& path, uint64_t events, uint64_t bytes) {
  fmt::print(stderr, "memloupe: wrote {} ({} events, {} bytes)\n", path, events, bytes);
}

void print_damage(const std::string& path, const Error& damage, uint64_t events) {
  fmt::print(stderr, "memloupe: warning: {}: {}; kept the {} events before it\n", path,
             damage.message, events);
}

// Builds the analysis index on the finaliser's reads of the events (the
// finaliser knows nothing of the analysis; this is where the two meet). Its
// cost is measured by bench/suite (symbolize with and without --no-index).
class IndexTap : public symbolize::FinalizeTap {
 public:
  void begin(const format::TraceInfo& info) override { builder_ = std::make_unique<analysis::IndexBuilder>(info); }
  void first(const format::Event& e) override {
    builder_->first(e);
    first_.fetch_add(1, std::memory_order_relaxed);
  }
  void second(const format::Event& e) override {
    builder_->second(e);
    second_.fetch_add(1, std::memory_order_relaxed);
  }
  std::optional<std::vector<uint8_t>> index(std::span<const uint8_t> trace) override {
    writing_.store(true, std::memory_order_relaxed);
    return builder_->finish(trace);
  }

  // For the progress line (another thread): which read, how far.
  std::string status() const {
    const uint64_t first = first_.load(std::memory_order_relaxed), second = second_.load(std::memory_order_relaxed);
    if (writing_.load(std::memory_order_relaxed)) return "writing the analysis index";
    if (second == 0) return fmt::format("reading the events and symbolising, {} events", first);
    return fmt::format("building the analysis index, {} of {} events ({:.0f}%)", second, first,
                       100.0 * static_cast<double>(second) / static_cast<double>(std::max<uint64_t>(first, 1)));
  }

 private:
  std::unique_ptr<analysis::IndexBuilder> builder_;
  std::atomic<uint64_t> first_{0}, second_{0};
  std::atomic<bool> writing_{false};
};

}  // namespace

int finalize_and_report(const std::string& input, const std::string& output,
                        symbolize::FinalizeOptions options, bool with_index, bool with_types) {
  options.symbolizer.warn = [](const std::string& message) {
    fmt::print(stderr, "memloupe: warning: {}\n", message);
  };
  IndexTap tap;
  if (with_index) options.tap = &tap;
  types::TypesAddon types;
  if (with_types) options.addon = &types;
  Expected<symbolize::FinalizeStats> stats = Error{""};
  {
    const ProgressLine progress("finalising " + input, [&tap, with_index] {
      return with_index ? tap.status() : std::string("reading the events and symbolising");
    });
    stats = symbolize::finalize_trace(input, output, options);
  }
  if (!stats) {
    fmt::print(stderr, "memloupe: cannot finalise {}: {}\n", input, stats.error().message);
    return kFailed;
  }
  if (stats->already_symbolized) {
    fmt::print(stderr, "memloupe: {} already has symbols; use --force to symbolise it again\n", input);
    return kOk;
  }
  if (stats->damage) print_damage(input, *stats->damage, stats->events);
  if (options.symbolize && with_types) {
    const types::TypesStats& t = types.stats();
    fmt::print(stderr, "memloupe: types: {} of {} allocation sites typed ({:.1f}% of bytes), {:.3f} s\n",
               t.typed_sites, t.sites, t.bytes ? 100.0 * static_cast<double>(t.typed_bytes) / static_cast<double>(t.bytes) : 0.0,
               stats->addon_seconds);
  }
  if (stats->index_bytes != 0) {
    fmt::print(stderr, "memloupe: analysis index: {} bytes\n", stats->index_bytes);
  } else if (with_index && stats->damage) {
    // finalize.cc writes none then: an index must summarise every event of the file.
    fmt::print(stderr, "memloupe: no analysis index written (the events are damaged); views read the events\n");
  }
  print_wrote(output, stats->events, stats->output_bytes);
  return stats->damage ? kDamaged : kOk;
}

int report_unfinalized(const std::string& path) {
  auto opened = reader::Reader::open(path);
  if (!opened) {
    fmt::print(stderr, "memloupe: {}: {}\n", path, opened.error().message);
    return kDamaged;
  }
  reader::Reader& r = **opened;
  uint64_t events = 0;
  while (r.next() != nullptr) ++events;
  if (r.error()) print_damage(path, *r.error(), events);
  print_wrote(path, events, r.file_size());
  return r.error() ? kDamaged : kOk;
}

}  // namespace memloupe::cli
