#include "cli/report_options.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli/commands.h"
#include "cli/trace_input.h"

namespace memloupe::cli {

void add_view_options(CLI::App* sub, ViewOptions& o) {
  sub->add_option("trace", o.trace, "A memloupe trace or a memtrace CTF trace")->required();
  auto* at = sub->add_option("--at", o.args.at, "Select the instant T (1.5s, 200ms, 30%, peak, end)")->expected(1);
  auto* between = sub->add_option("--between", o.between, "Select the window [T1, T2]")->expected(2);
  at->excludes(between);
  sub->add_flag("--at-peak", o.args.at_peak, "Select the instant the heap peaked");
  sub->add_flag("--at-end", o.args.at_end, "Select the end of the trace (live = leaked)");
  auto* live = sub->add_flag("--live", o.live, "Keep blocks live in the selection (default)");
  auto* allocated = sub->add_flag("--allocated", o.allocated, "Keep blocks allocated in the selection");
  auto* freed = sub->add_flag("--freed", o.freed, "Keep blocks freed in the selection");
  live->excludes(allocated)->excludes(freed);
  allocated->excludes(freed);
  sub->add_option("--kind", o.args.kind,
                  "Keep heap blocks (malloc, new...), mapped memory (anonymous mmap/mremap, sbrk) or all (default)");
  sub->add_option("--min-size", o.args.min_size, "Keep blocks of at least this size (4KiB, 1M)");
  sub->add_option("--max-size", o.args.max_size, "Keep blocks of at most this size");
  sub->add_option("--min-lifetime", o.args.min_lifetime, "Keep blocks living at least this long (10us, 1s, 5%)");
  sub->add_option("--max-lifetime", o.args.max_lifetime, "Keep blocks living at most this long");
  sub->add_option("--thread", o.thread, "Keep blocks allocated by this thread (memloupe's thread number)");
  // One value per occurrence, so `--focus FUNC TRACE` leaves TRACE to the positional.
  sub->add_option("--focus", o.args.focus, "Keep stacks with a function containing this text (repeatable)")
      ->allow_extra_args(false);
  sub->add_option("--hide", o.args.hide, "Drop frames whose function contains this text (repeatable)")
      ->allow_extra_args(false);
  sub->add_flag("--no-index", o.no_index, "Read the events even when the trace's analysis index has the answer");
}

std::optional<analysis::Model> analyze(ViewOptions& o, uint32_t series_buckets, int& exit_code) {
  if (!o.between.empty()) o.args.at = o.between;
  if (o.live) o.args.test = analysis::WindowTest::Live;
  if (o.allocated) o.args.test = analysis::WindowTest::Allocated;
  if (o.freed) o.args.test = analysis::WindowTest::Freed;
  o.args.thread = o.thread;
  o.args.series_buckets = series_buckets;

  // Open once first: it gives the shared messages and exit codes for bad files.
  if (!open_trace(o.trace, exit_code)) return std::nullopt;

  // A progress bar only for a person watching: stderr is a terminal.
  const bool tty = ::isatty(STDERR_FILENO) == 1;
  int shown = -1;
  analysis::Progress progress;
  if (tty) {
    progress = [&shown](double fraction) {
      int percent = static_cast<int>(fraction * 100);
      if (percent == shown) return;
      shown = percent;
      int bar = percent * 30 / 100;
      std::fprintf(stderr, "\r  analysing [%.*s%*s] %3d%%", bar, "##############################", 30 - bar, "", percent);
    };
  }
  auto model = analysis::analyze_file(o.trace, o.args, progress,
                                      o.no_index ? analysis::UseIndex::Never : analysis::UseIndex::IfFresh);
  if (tty) std::fprintf(stderr, "\r%60s\r", "");
  if (!model) {
    std::cerr << "memloupe: " << o.trace << ": " << model.error().message << '\n';
    exit_code = model.error().offset == Error::kNoOffset ? kUsage : kNotATrace;
    return std::nullopt;
  }
  if (model->index_note) std::cerr << "memloupe: warning: " << o.trace << ": " << *model->index_note << '\n';
  if (model->overview.error) {
    std::cerr << "memloupe: " << o.trace << ": " << model->overview.error->message
              << " (the report covers everything before it)\n";
  }
  exit_code = model->overview.error ? kDamaged : kOk;
  return std::move(model.value());
}

int print_view(ViewOptions& options, const std::function<std::string(const analysis::Model&)>& render) {
  int exit_code = kOk;
  const std::optional<analysis::Model> model = analyze(options, 0, exit_code);
  if (model) std::cout << render(*model);
  return exit_code;
}

}  // namespace memloupe::cli
