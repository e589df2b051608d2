// `memloupe replay TRACE`: replays an `--all` trace against several allocators
// and shows them side by side (docs/REPLAY.md).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/companion.h"
#include "cli/trace_input.h"
#include "replay/allocators.h"
#include "replay/predict.h"
#include "replay/prepare.h"
#include "replay/run_replayer.h"
#include "report/html_json.h"
#include "report/text_format.h"
#include "report/text_table.h"

namespace memloupe::cli {
namespace {

using replay::Measurements;

struct ReplayOptions {
  std::string trace;
  std::string allocators = replay::kDefaultAllocators;
  std::vector<std::string> extra;
  unsigned repeat = 1;
  uint64_t window = replay::PrepareOptions{}.window;
  bool json = false;
};

struct AllocatorResult {
  replay::Allocator allocator;
  std::vector<Measurements> runs;
  std::optional<std::string> failure;  // the last failure; the allocator is shown as failed
  Measurements median;
  Measurements spread;
  std::optional<double> predicted;
};

// The replay must have run every prepared call, no more and no fewer.
std::optional<std::string> check_counts(const Measurements& m, const replay::TraceFacts& f) {
  if (m.order_violations != 0)
    return fmt::format("{} calls ran out of the recorded order (a replayer defect)", m.order_violations);
  if (m.alloc_calls != static_cast<double>(f.alloc_calls) || m.free_calls != static_cast<double>(f.free_calls))
    return fmt::format("the replayer ran {} allocations and {} frees of {} and {}", m.alloc_calls, m.free_calls,
                       f.alloc_calls, f.free_calls);
  return std::nullopt;
}

const AllocatorResult* glibc_of(const std::vector<AllocatorResult>& results) {
  for (const AllocatorResult& r : results)
    if (r.allocator.name == "glibc" && !r.failure && !r.runs.empty()) return &r;
  return nullptr;
}

std::string ratio(double value, double base) {
  return base > 0 ? fmt::format(" ({:.2f}x)", value / base) : std::string();
}

void print_table(const replay::TraceFacts& f, const std::vector<AllocatorResult>& results, unsigned repeat) {
  fmt::print("{} threads, {} allocation calls, {} frees ({} across threads), ideal peak {}\n", f.threads,
             report::human_count(static_cast<double>(f.alloc_calls)),
             report::human_count(static_cast<double>(f.free_calls)),
             report::human_count(static_cast<double>(f.cross_thread_frees)),
             report::human_bytes(static_cast<double>(f.ideal_peak_bytes)));
  if (repeat > 1) fmt::print("medians of {} runs each; spread = (max - min) / median\n", repeat);
  fmt::print("\n");
  const AllocatorResult* base = glibc_of(results);
  report::TextTable table;
  table.add_column("", report::TextTable::Align::Left);
  std::vector<const AllocatorResult*> shown;
  for (const AllocatorResult& r : results) {
    if (r.failure || r.runs.empty()) continue;
    table.add_column(r.allocator.name, report::TextTable::Align::Right);
    shown.push_back(&r);
  }
  using Get = double (*)(const AllocatorResult&);
  const auto row = [&](const char* label, Get get, auto show) {
    std::vector<report::Cell> cells{{label}};
    for (const AllocatorResult* r : shown) {
      std::string text = show(get(*r));
      if (base != nullptr && r != base && get(*r) > 0) text += ratio(get(*r), get(*base));
      cells.push_back({text});
    }
    table.add_row(std::move(cells));
  };
  const auto secs = [](double s) { return fmt::format("{:.3f} s", s); };
  const auto bytes = [](double b) { return report::human_bytes(b); };
  const auto count = [](double c) { return report::human_count(c); };
  row("wall time", [](const AllocatorResult& r) { return r.median.wall_s; }, secs);
  row("CPU time", [](const AllocatorResult& r) { return r.median.cpu_s; }, secs);
  row("in allocator calls", [](const AllocatorResult& r) { return r.median.alloc_time_s; }, secs);
  row("peak RSS", [](const AllocatorResult& r) { return r.median.peak_rss_bytes; }, bytes);
  row("final RSS", [](const AllocatorResult& r) { return r.median.final_rss_bytes; }, bytes);
  row("overhead (heap RSS / ideal)",
      [](const AllocatorResult& r) { return r.median.peak_rss_bytes - r.median.baseline_rss_bytes; },
      [&](double heap) { return fmt::format("{:.2f}", f.ideal_peak_bytes ? heap / f.ideal_peak_bytes : 0.0); });
  row("minor faults", [](const AllocatorResult& r) { return r.median.minor_faults; }, count);
  row("predicted program peak RSS", [](const AllocatorResult& r) { return r.predicted.value_or(0); },
      [](double b) { return b > 0 ? report::human_bytes(b) : std::string("-"); });
  if (repeat > 1) {
    row("spread of wall time", [](const AllocatorResult& r) { return r.spread.wall_s; },
        [](double s) { return fmt::format("{:.0f}%", s * 100); });
    row("spread of peak RSS", [](const AllocatorResult& r) { return r.spread.peak_rss_bytes; },
        [](double s) { return fmt::format("{:.0f}%", s * 100); });
  }
  fmt::print("{}", table.render());
  if (f.recorded_peak_rss_bytes != 0 && base != nullptr) {
    fmt::print("\nprogram's recorded peak RSS {} (recorder's share about {}); predictions: docs/REPLAY.md § Prediction\n",
               report::human_bytes(static_cast<double>(f.recorded_peak_rss_bytes)),
               report::human_bytes(static_cast<double>(replay::recorder_rss_estimate(f))));
  }
}

void print_json(const replay::TraceFacts& f, const std::vector<AllocatorResult>& results, unsigned repeat) {
  report::JsonWriter j;
  j.begin_object();
  j.key("threads").integer(f.threads);
  j.key("alloc_calls").integer(f.alloc_calls);
  j.key("free_calls").integer(f.free_calls);
  j.key("realloc_calls").integer(f.realloc_calls);
  j.key("cross_thread_frees").integer(f.cross_thread_frees);
  j.key("ideal_peak_bytes").integer(f.ideal_peak_bytes);
  j.key("max_live_blocks").integer(f.max_live_blocks);
  j.key("recorded_peak_rss_bytes").integer(f.recorded_peak_rss_bytes);
  j.key("recorder_rss_estimate_bytes").integer(replay::recorder_rss_estimate(f));
  j.key("trace_duration_s").number(static_cast<double>(f.duration_ns) * 1e-9);
  j.key("repeat").integer(repeat);
  j.key("complete").boolean(!f.damage);
  j.key("runs").begin_array();
  for (const AllocatorResult& r : results) {
    j.begin_object();
    j.key("allocator").string(r.allocator.name);
    j.key("library").string(r.allocator.library);
    if (!r.allocator.missing.empty()) {
      j.key("skipped").string(r.allocator.missing);
    } else if (r.failure) {
      j.key("failed").string(*r.failure);
    } else {
      const Measurements& m = r.median;
      j.key("wall_s").number(m.wall_s);
      j.key("cpu_s").number(m.cpu_s);
      j.key("alloc_time_s").number(m.alloc_time_s);
      j.key("peak_rss_bytes").integer(static_cast<uint64_t>(m.peak_rss_bytes));
      j.key("final_rss_bytes").integer(static_cast<uint64_t>(m.final_rss_bytes));
      j.key("baseline_rss_bytes").integer(static_cast<uint64_t>(m.baseline_rss_bytes));
      j.key("predicted_peak_rss_bytes").integer(static_cast<uint64_t>(r.predicted.value_or(0)));
      j.key("minor_faults").integer(static_cast<uint64_t>(m.minor_faults));
      j.key("overhead").number(f.ideal_peak_bytes ? (m.peak_rss_bytes - m.baseline_rss_bytes) / f.ideal_peak_bytes : 0);
      j.key("failed_calls").integer(static_cast<uint64_t>(m.failed_calls));
      j.key("waits").integer(static_cast<uint64_t>(m.waits));
      j.key("spread_wall").number(r.spread.wall_s);
      j.key("spread_peak_rss").number(r.spread.peak_rss_bytes);
    }
    j.end_object();
  }
  j.end_array();
  j.end_object();
  fmt::print("{}\n", j.text());
}

int run_replay(const ReplayOptions& o) {
  int exit_code = kOk;
  auto reader = open_trace(o.trace, exit_code);
  if (!reader) return exit_code;
  auto prepared = replay::prepare(*reader, replay::PrepareOptions{o.window});
  if (!prepared) {
    fmt::print(stderr, "memloupe: {}: {}\n", o.trace, prepared.error().message);
    return kFailed;
  }
  const replay::TraceFacts& facts = prepared->facts;
  if (facts.damage) {
    fmt::print(stderr, "memloupe: {}: {}; replaying the {} calls before the damage\n", o.trace,
               facts.damage->message, facts.alloc_calls + facts.free_calls);
  }
  auto allocators = replay::choose_allocators(o.allocators, o.extra);
  if (!allocators) {
    fmt::print(stderr, "memloupe: {}\n", allocators.error().message);
    return kUsage;
  }
  auto replayer = find_companion("memloupe-replayer", "MEMLOUPE_REPLAYER");
  if (!replayer) {
    fmt::print(stderr, "memloupe: {}\n", replayer.error().message);
    return kFailed;
  }
  auto ops = replay::OpFile::create();
  if (!ops) {
    fmt::print(stderr, "memloupe: {}\n", ops.error().message);
    return kFailed;
  }
  if (auto written = replay::write_op_file(*prepared, ops->fd()); !written) {
    fmt::print(stderr, "memloupe: {}\n", written.error().message);
    return kFailed;
  }
  // The streams are in the memory file now; 16 bytes per call need not be held twice.
  std::vector<std::vector<replay::Op>>().swap(prepared->threads);

  std::vector<AllocatorResult> results;
  for (const replay::Allocator& a : *allocators) {
    if (!a.missing.empty()) fmt::print(stderr, "memloupe: {}: skipped, {}\n", a.name, a.missing);
    results.push_back({a, {}, {}, {}, {}, {}});
  }
  // A replay does less work than the recorded run (which ran under the
  // recorder), so ten times its duration, and a minute more, means a hang.
  const double timeout_s = 60 + 10 * static_cast<double>(facts.duration_ns) * 1e-9;
  // Repeats go round the allocators, so a slow spell of the machine hits all of them.
  for (unsigned rep = 0; rep < o.repeat; ++rep) {
    for (AllocatorResult& r : results) {
      if (!r.allocator.missing.empty() || r.failure) continue;
      auto m = replay::run_replayer(*replayer, *ops, r.allocator.library, timeout_s);
      if (m) {
        if (auto bad = check_counts(*m, facts)) m = Error{*bad};
      }
      if (!m) {
        r.failure = m.error().message;
        fmt::print(stderr, "memloupe: {}: {}\n", r.allocator.name, *r.failure);
        continue;
      }
      r.runs.push_back(*m);
    }
  }
  bool any = false;
  for (AllocatorResult& r : results) {
    if (r.failure || r.runs.empty()) continue;
    r.median = replay::median(r.runs);
    r.spread = replay::spread(r.runs);
    any = true;
  }
  if (const AllocatorResult* base = glibc_of(results)) {
    for (AllocatorResult& r : results) {
      if (!r.failure && !r.runs.empty()) r.predicted = replay::predict_peak_rss(facts, base->median, r.median);
    }
  }
  if (o.json) {
    print_json(facts, results, o.repeat);
  } else {
    print_table(facts, results, o.repeat);
  }
  std::fflush(stdout);
  if (facts.damage) return kDamaged;
  return any ? kOk : kFailed;
}

}  // namespace

Command add_replay_command(CLI::App& app) {
  auto o = std::make_shared<ReplayOptions>();
  CLI::App* sub = app.add_subcommand("replay", "Replay an --all trace against several allocators, side by side");
  sub->add_option("trace", o->trace, "A trace recorded with `memloupe run --all`")->required();
  sub->add_option("--allocators", o->allocators, "Comma-separated: glibc, jemalloc, tcmalloc, mimalloc")
      ->capture_default_str();
  sub->add_option("--allocator", o->extra, "Another allocator as NAME=PATH.so (repeatable)");
  sub->add_option("--repeat", o->repeat, "Runs per allocator (medians and spread)")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  sub->add_option("--window", o->window,
                  "Calls per ordering window: no thread runs ahead of the others by more (0: off)")
      ->capture_default_str();
  sub->add_flag("--json", o->json, "Print one JSON object");
  return {sub, [o] { return run_replay(*o); }};
}

}  // namespace memloupe::cli
