// The header lines every view starts with: what was traced, and what is selected.
#include <ctime>

#include "report/text_format.h"
#include "report/text_views.h"

namespace memloupe::report {
namespace {

std::string utc(uint64_t wall_ns) {
  const std::time_t secs = static_cast<std::time_t>(wall_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string end_text(const analysis::Overview& o) {
  if (!o.end_reason) {
    // memtrace CTF has no end event: its traces never say how the program ended.
    if (!o.info.source_format.empty()) return "how it ended is not recorded: " + o.info.source_format + " has no end record";
    return "no end record: the program was killed or the trace was cut";
  }
  switch (*o.end_reason) {
    case format::EndReason::Exit: return "exited";
    case format::EndReason::Stopped: return "tracing stopped";
    case format::EndReason::Signal: return "killed by a signal";
    case format::EndReason::Exec: return "exec'd another program";
  }
  return "?";
}

std::string row(const char* label, const std::string& value) {
  std::string out = label;
  out.resize(13, ' ');
  return out + value + '\n';
}

}  // namespace

std::string describe_trace(const analysis::Model& m) {
  const analysis::Overview& o = m.overview;
  std::string command;
  for (const std::string& a : o.info.argv) command += (command.empty() ? "" : " ") + a;
  if (command.empty()) command = o.info.executable;
  std::string out = row("Command", command);
  std::string where = "pid " + std::to_string(o.info.pid);
  if (!o.info.host.empty()) where += " on " + o.info.host;
  if (o.info.start_wall_ns) where += ", started " + utc(o.info.start_wall_ns);
  out += row("Process", where);
  out += row("Duration", human_duration(o.duration_ns) + " (" + end_text(o) + ")");
  if (o.info.mode == format::Mode::All) {
    out += row("Mode", "every call recorded (--all): figures are exact");
  } else {
    out += row("Mode", "sampled, one sample per " + human_bytes(static_cast<double>(o.info.bytes_per_sample)) +
                           " allocated on average: figures are estimates [95% interval]");
  }
  std::string threads = std::to_string(o.threads.size());
  size_t listed = 0;
  for (const analysis::ThreadInfo& t : o.threads) {
    if (listed++ == 6) {
      threads += ", …";
      break;
    }
    threads += (listed == 1 ? ": " : ", ") + (t.name.empty() ? "#" + std::to_string(t.id.value) : t.name);
    if (t.os_tid) threads += " (tid " + std::to_string(t.os_tid) + ")";
  }
  out += row("Threads", threads);
  out += row("Events", human_count(static_cast<double>(o.events)) + " (" +
                           human_count(static_cast<double>(o.alloc_events)) + " allocations, " +
                           human_count(static_cast<double>(o.free_events)) + " frees recorded)");
  if (!o.info.source_format.empty()) out += row("Format", o.info.source_format);
  return out;
}

std::string describe_selection(const analysis::Model& m) {
  const analysis::Filter& f = m.aggregate.query.filter;
  std::vector<std::string> parts;
  if (f.window) {
    const char* test = f.test == analysis::WindowTest::Live        ? "live"
                       : f.test == analysis::WindowTest::Allocated ? "allocated"
                                                                   : "freed";
    if (f.window->instant()) {
      parts.push_back(std::string(test) + " at " + human_duration(f.window->begin_ns));
    } else {
      parts.push_back(std::string(test) + " between " + human_duration(f.window->begin_ns) + " and " +
                      human_duration(f.window->end_ns));
    }
  }
  if (f.min_size > 0) parts.push_back("size ≥ " + human_bytes(static_cast<double>(f.min_size)));
  if (f.max_size != analysis::kForever) parts.push_back("size ≤ " + human_bytes(static_cast<double>(f.max_size)));
  if (f.min_lifetime_ns > 0) parts.push_back("lifetime ≥ " + human_duration(f.min_lifetime_ns));
  if (f.max_lifetime_ns != analysis::kForever) parts.push_back("lifetime ≤ " + human_duration(f.max_lifetime_ns));
  if (f.thread) parts.push_back("thread " + std::to_string(f.thread->value));
  for (const std::string& s : f.focus) parts.push_back("stacks containing '" + s + "'");
  for (const std::string& s : f.hide) parts.push_back("hiding frames matching '" + s + "'");
  if (parts.empty()) return {};
  std::string out = "Selection    ";
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? "; " : "") + parts[i];
  return out + '\n';
}

}  // namespace memloupe::report
