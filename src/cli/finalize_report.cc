#include "cli/finalize_report.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <optional>
#include <variant>

#include "analysis/index.h"
#include "cli/commands.h"
#include "cli/index_tap.h"
#include "cli/progress_line.h"
#include "finalize/follow.h"
#include "finalize/kept_until_exit.h"
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

void warn_on_stderr(finalize::FinalizeOptions& options) {
  options.symbolizer.warn = [](const std::string& message) {
    fmt::print(stderr, "memloupe: warning: {}\n", message);
  };
}

// Prints what finalize_trace did (finalize_report.h) and returns the exit status.
int report(Expected<finalize::FinalizeStats>& stats, const std::string& input, const std::string& output,
           const finalize::FinalizeOptions& options, const types::TypesAddon& types, bool with_index,
           bool with_types) {
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

}  // namespace

std::string index_flag_help() {
  return fmt::format("Write an analysis index even for a trace of fewer than {} events (the views then read "
                     "its events, in a few tens of milliseconds)",
                     analysis::kIndexMinEvents);
}

int finalize_and_report(const std::string& input, const std::string& output, finalize::FinalizeOptions options,
                        analysis::IndexWhen index, bool with_types) {
  const bool with_index = index != analysis::IndexWhen::Never;
  warn_on_stderr(options);
  IndexTap tap(index);
  if (with_index) options.tap = &tap;
  types::TypesAddon types;
  if (with_types) options.addon = &types;
  Expected<finalize::FinalizeStats> stats = Error{""};
  {
    const ProgressLine progress("finalising " + input, [&tap, with_index] {
      return with_index ? tap.status() : std::string("reading the events and symbolising");
    });
    stats = finalize::finalize_trace(input, output, options);
  }
  return report(stats, input, output, options, types, with_index, with_types);
}

struct FollowingFinaliser::Parts {
  explicit Parts(analysis::IndexWhen index) : tap(index) {}
  IndexTap tap;
  types::TypesAddon types;
  finalize::FinalizeOptions options;
  std::optional<finalize::TraceFollower> follower;
};

FollowingFinaliser::FollowingFinaliser(std::string raw, std::function<bool()> written, analysis::IndexWhen index)
    : raw_(std::move(raw)), index_(index), parts_(std::make_unique<Parts>(index)) {
  Parts& p = *parts_;
  warn_on_stderr(p.options);
  p.options.tap = &p.tap;
  p.options.addon = &p.types;
  p.options.keep_until_exit = true;  // `memloupe run` exits once the files are written
  p.follower.emplace(raw_, p.options, std::move(written));
}

FollowingFinaliser::~FollowingFinaliser() = default;

int FollowingFinaliser::finish(const std::string& output) {
  Parts& p = *parts_;
  Expected<finalize::FinalizeStats> stats = Error{""};
  bool followed = false;
  {
    const ProgressLine progress("finalising " + raw_, [&p] { return p.tap.status(); });
    Expected<finalize::FollowedRead> read = p.follower->finish();
    followed = static_cast<bool>(read);
    if (followed) {
      stats = finalize::finalize_trace(raw_, output, p.options, &*read);
      finalize::keep_until_exit(std::move(*read));  // the prepared symbolisers: libdw's trees
    }
  }
  if (!followed) {
    // Nothing is lost: the file is read again, with a tap and addon of its own.
    p.follower.reset();
    return finalize_and_report(raw_, output, {}, index_);
  }
  ended_known_ = static_cast<bool>(stats);
  return report(stats, raw_, output, p.options, p.types, true, true);
}

const std::optional<format::EndReason>* FollowingFinaliser::end_reason() const {
  return ended_known_ ? &parts_->tap.end_reason() : nullptr;
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
