// `memloupe info TRACE`: the trace's header and what it contains (counts by
// event kind; for memtrace CTF traces also memtrace's own figures).
#include <fmt/format.h>

#include <cstdio>
#include <ctime>
#include <iostream>
#include <string>

#include "analysis/index.h"
#include "cli/commands.h"
#include "cli/trace_input.h"
#include "ctf/ctf_reader.h"
#include "reader/bytes.h"
#include "reader/dump.h"

namespace memloupe::cli {
namespace {

std::string wall_time(uint64_t ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  if (gmtime_r(&seconds, &tm) == nullptr) return std::to_string(ns) + " ns";
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return fmt::format("{}.{:06} UTC", buf, ns % 1'000'000'000 / 1000);
}

void print_header(const reader::Reader& r, const std::string& path) {
  const format::TraceInfo& info = r.info();
  fmt::print("trace:        {} ({} bytes)\n", path, r.file_size());
  fmt::print("format:       {} (version {})\n",
             info.source_format.empty() ? "memloupe" : info.source_format, info.version);
  fmt::print("pid:          {}\n", info.pid);
  fmt::print("executable:   {}\n", info.executable);
  if (!info.argv.empty()) {
    std::string argv;
    for (const std::string& a : info.argv) argv += (argv.empty() ? "" : " ") + a;
    fmt::print("command line: {}\n", argv);
  }
  fmt::print("host:         {}\n", info.host);
  fmt::print("started:      {}\n", wall_time(info.start_wall_ns));
  if (info.mode == format::Mode::All) {
    fmt::print("sampling:     every call{}\n", info.addresses ? ", with block addresses" : "");
  } else {
    fmt::print("sampling:     sampled, one sample per {} bytes on average\n", info.bytes_per_sample);
  }
  fmt::print("time unit:    {} µs (event times are whole ticks of it)\n", info.time_unit_us);
  fmt::print("pointer size: {} bytes\n", info.pointer_size);
  fmt::print("symbols:      {}\n", r.has_symbols_section() ? "symbols section present"
                                   : reader::ctf_details(r) ? "in the stream (memtrace locations)"
                                                            : "none (not finalised)");
}

// Whether `summary` and `report` can skip the events (src/analysis/index.h).
// `events`: the trace's.
void print_index(const reader::Reader& r, const std::string& path, uint64_t events) {
  if (!r.info().source_format.empty()) return;
  auto bytes = reader::Bytes::map_file(path);
  if (!bytes) return;
  const analysis::IndexLookup found = analysis::find_index((*bytes)->data(), r.info());
  switch (found.state) {
    case analysis::IndexLookup::State::None:
      // Say why: the views then read every event, which takes seconds on a large trace.
      if (!r.has_symbols_section()) {
        fmt::print("analysis index: none (not finalised; `memloupe symbolize` writes one)\n");
        break;
      }
      fmt::print("analysis index: none (finalised without one: {}`symbolize --no-index`, or its events were "
                 "damaged (`memloupe symbolize --force` writes one), or its sampling rate changed while it "
                 "ran (memloupe_set_rate: the index holds one rate))\n",
                 analysis::index_pays(events)
                     ? ""
                     : fmt::format("fewer than {} events, which the views read in a few tens of milliseconds "
                                   "(`memloupe symbolize --force --index` writes one), or ",
                                   analysis::kIndexMinEvents));
      break;
    case analysis::IndexLookup::State::Fresh:
      fmt::print("analysis index: yes, at offset {} ({} stacks; answers summary and report without reading the events)\n",
                 found.offset, found.index->aggregate.stacks.size());
      break;
    case analysis::IndexLookup::State::Stale:
    case analysis::IndexLookup::State::Damaged:
      fmt::print("analysis index: ignored ({})\n", found.problem);
      break;
  }
}

void print_counts(const reader::EventCounts& counts) {
  fmt::print("\nevents:       {}\n", counts.events);
  for (size_t k = 0; k < reader::kEventKinds; ++k) {
    if (counts.by_kind[k] != 0) fmt::print("  {:<14}{}\n", reader::kEventKindNames[k], counts.by_kind[k]);
  }
  if (counts.timed) {
    fmt::print("time span:    {} to {}\n", reader::format_time(counts.first_time_ns),
               reader::format_time(counts.last_time_ns));
  }
  fmt::print("mean backtrace length: {} frames\n", counts.mean_backtrace_length());
}

// memtrace's own vocabulary, so the figures can be compared with its tools.
void print_ctf(const reader::CtfDetails& d, const reader::EventCounts& counts, size_t distinct_codes) {
  fmt::print("\nmemtrace CTF v{}:\n", d.version);
  fmt::print("  sample rate {}, word size {}, pid {}\n", d.sample_rate, d.word_size, d.pid);
  fmt::print("  {} location events ({} distinct location codes)\n", d.location_events, distinct_codes);
  fmt::print("  {} allocation events: {} long-form, {} short-form\n", d.long_allocs + d.short_allocs,
             d.long_allocs, d.short_allocs);
  fmt::print("  mean backtrace length {} frames\n", counts.mean_backtrace_length());
  fmt::print("  {} promotions, {} collections\n", d.promotions, d.collections);
  fmt::print("  allocation sources: {} minor, {} major, {} external\n", d.allocs_by_source[0],
             d.allocs_by_source[1], d.allocs_by_source[2]);
  fmt::print("  packets: {} ({} skipped: written by another process)\n", d.packets, d.skipped_packets);
  fmt::print("  OCaml runtime parameters: {}\n", d.runtime_params.empty() ? "(none)" : d.runtime_params);
  fmt::print("  context: {}\n", d.context.empty() ? "(none)" : d.context);
}

}  // namespace

Command add_info_command(CLI::App& app) {
  auto path = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("info", "Show a trace's header and what it contains");
  sub->add_option("trace", *path, "A memloupe trace or a memtrace CTF trace")->required();
  return {sub, [path] {
            int exit_code = kOk;
            auto reader = open_trace(*path, exit_code);
            if (!reader) return exit_code;
            reader::EventCounts counts;
            while (const format::Event* e = reader->next()) counts.add(*e);
            print_header(*reader, *path);
            print_index(*reader, *path, counts.events);
            print_counts(counts);
            if (const reader::CtfDetails* d = reader::ctf_details(*reader)) {
              print_ctf(*d, counts, reader->symbols().size());
            }
            std::fflush(stdout);
            return report_damage(*reader, *path);
          }};
}

}  // namespace memloupe::cli
