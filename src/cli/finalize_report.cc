#include "cli/finalize_report.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "analysis/index.h"
#include "cli/commands.h"
#include "reader/reader.h"

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
// finaliser knows nothing of the analysis; this is where the two meet).
class IndexTap : public symbolize::FinalizeTap {
 public:
  void begin(const format::TraceInfo& info) override { builder_ = std::make_unique<analysis::IndexBuilder>(info); }
  void first(const format::Event& e) override { timed([&] { builder_->first(e); }); }
  void second(const format::Event& e) override { timed([&] { builder_->second(e); }); }
  std::optional<std::vector<uint8_t>> index(std::span<const uint8_t> trace) override {
    std::optional<std::vector<uint8_t>> out;
    timed([&] { out = builder_->finish(trace); });
    return out;
  }
  // Time spent building the index (the model's share of the finalise).
  double seconds() const { return std::chrono::duration<double>(spent_).count(); }

 private:
  // Per event, two clock reads would cost as much as the work; so only every
  // 64th call is timed, scaled up.
  template <class F>
  void timed(F&& f) {
    if (calls_++ % 64 != 0) return f();
    const auto start = std::chrono::steady_clock::now();
    f();
    spent_ += (std::chrono::steady_clock::now() - start) * 64;
  }
  std::unique_ptr<analysis::IndexBuilder> builder_;
  uint64_t calls_ = 0;
  std::chrono::steady_clock::duration spent_{};
};

}  // namespace

int finalize_and_report(const std::string& input, const std::string& output,
                        symbolize::FinalizeOptions options, bool with_index) {
  options.symbolizer.warn = [](const std::string& message) {
    fmt::print(stderr, "memloupe: warning: {}\n", message);
  };
  IndexTap tap;
  if (with_index) options.tap = &tap;
  auto stats = symbolize::finalize_trace(input, output, options);
  if (!stats) {
    fmt::print(stderr, "memloupe: cannot finalise {}: {}\n", input, stats.error().message);
    return kFailed;
  }
  if (stats->already_symbolized) {
    fmt::print(stderr, "memloupe: {} already has symbols; use --force to symbolise it again\n", input);
    return kOk;
  }
  if (stats->damage) print_damage(input, *stats->damage, stats->events);
  if (stats->index_bytes != 0) {
    fmt::print(stderr, "memloupe: analysis index: {} bytes, built in {:.2f} s\n", stats->index_bytes, tap.seconds());
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
