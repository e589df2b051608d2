// `memloupe export TRACE --format pprof|folded|massif|memtrace -o FILE`: the
// trace in the formats other tools read (docs/REPORT.md, "Exports").
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/report_options.h"
#include "cli/trace_input.h"
#include "ctf/ctf_writer.h"
#include "report/export_folded.h"
#include "report/export_massif.h"
#include "report/export_pprof.h"
#include "report/html_data.h"
#include "report/profile_from_model.h"
#include "types/type_table.h"

namespace memloupe::cli {
namespace {

struct Options {
  ViewOptions view;
  std::string format;
  std::string output;
  std::string metric = "allocated";
};

// memtrace CTF: the trace's own events, re-encoded (filters do not apply: memtrace
// has no notion of them, and its viewer filters by itself).
int export_memtrace(const Options& o, std::ostream& out) {
  int exit_code = kOk;
  auto reader = open_trace(o.view.trace, exit_code);
  if (!reader) return exit_code;
  reader::CtfWriter writer(reader->info(), reader->symbols(), [&out](std::span<const uint8_t> packet) {
    out.write(reinterpret_cast<const char*>(packet.data()), static_cast<std::streamsize>(packet.size()));
  });
  while (const format::Event* event = reader->next()) writer.write(*event);
  writer.finish();
  // Say what the file does not hold, so nobody takes the read-back for the original.
  const std::vector<std::string> losses = writer.losses();
  if (!losses.empty()) {
    std::cerr << "memloupe: memtrace CTF cannot carry everything; not carried:\n";
    for (const std::string& loss : losses) std::cerr << "  " << loss << '\n';
  }
  return report_damage(*reader, o.view.trace);
}

int run_export(Options& o) {
  report::FoldedMetric metric{};
  if (o.format == "folded" && !report::parse_folded_metric(o.metric, metric)) {
    std::cerr << "memloupe: unknown --metric '" << o.metric << "' (allocated, live, peak, leaked, count)\n";
    return kUsage;
  }
  std::ofstream file;
  const bool to_stdout = o.output == "-";
  if (!to_stdout) file.open(o.output, std::ios::binary);
  std::ostream& out = to_stdout ? std::cout : file;
  if (!out) {
    std::cerr << "memloupe: cannot write '" << o.output << "'\n";
    return kFailed;
  }

  int exit_code = kOk;
  if (o.format == "memtrace") {
    exit_code = export_memtrace(o, out);
  } else {
    uint32_t buckets = o.format == "massif" ? report::kHtmlBuckets : 0;
    auto model = analyze(o.view, buckets, exit_code);
    if (!model) return exit_code;
    const types::LoadedTypes types = types::load_types_file(o.view.trace);
    report::Profile profile = report::profile_from_model(*model, &types.table);
    if (o.format == "pprof") {
      auto bytes = report::pprof_gzipped(profile);
      if (!bytes) {
        std::cerr << "memloupe: " << bytes.error().message << '\n';
        return kFailed;
      }
      out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    } else if (o.format == "folded") {
      report::write_folded(profile, metric, out);
    } else {
      report::write_massif(profile, out);
    }
  }
  out.flush();
  if (!to_stdout) file.close();
  if (!out || (!to_stdout && !file)) {
    std::cerr << "memloupe: cannot write '" << o.output << "'\n";
    return kFailed;
  }
  return exit_code;
}

}  // namespace

Command add_export_command(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand("export", "Write the trace for other tools: pprof, folded stacks, massif, memtrace");
  add_view_options(sub, o->view);
  sub->add_option("--format", o->format, "pprof (gzipped profile.proto), folded, massif or memtrace (CTF v3)")
      ->required()
      ->check(CLI::IsMember({"pprof", "folded", "massif", "memtrace"}));
  sub->add_option("-o,--output", o->output, "The file to write ('-' for standard output)")->required();
  sub->add_option("--metric", o->metric, "folded: allocated, live, peak, leaked or count")->capture_default_str();
  return {sub, [o] { return run_export(*o); }};
}

}  // namespace memloupe::cli
