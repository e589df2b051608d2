#include "reader/dump.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace memloupe::reader {

const std::array<std::string_view, kEventKinds> kEventKindNames = {
    "alloc",   "free",        "thread_start", "thread_name", "thread_end",
    "module_load", "module_unload", "rss", "marker", "call_totals",
    "trace_end", "symbol", "promote", "rate_change", "depth_change",
};
static_assert(kEventKinds == 15, "a new event kind needs a name above and a line below");

namespace {

void hex(uint64_t v, std::string& out) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  out += buf;
}

// Text from the trace cannot break the one-line-per-event rule: control
// characters and backslashes are escaped.
void escaped(std::string_view s, std::string& out, bool in_quotes) {
  for (unsigned char c : s) {
    if (c == '\\' || (in_quotes && c == '"')) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
}

void quoted(std::string_view s, std::string& out) {
  out += '"';
  escaped(s, out, true);
  out += '"';
}

// A word as-is, or quoted when it holds a space or a quote (e.g. "operator new").
void word(std::string_view s, std::string& out) {
  if (s.empty() || s.find_first_of(" \"") != std::string_view::npos) {
    quoted(s, out);
  } else {
    escaped(s, out, false);
  }
}

// `function (file:line:column)`, leaving out what is unknown (0 or empty).
void frame(std::string_view function, std::string_view file, uint32_t line, uint32_t column,
           std::string& out) {
  escaped(function.empty() ? "??" : function, out, false);
  if (file.empty()) return;
  out += " (";
  escaped(file, out, false);
  if (line != 0) {
    out += ':' + std::to_string(line);
    if (column != 0) out += ':' + std::to_string(column);
  }
  out += ')';
}

void backtrace(std::span<const uint64_t> addresses, const SymbolTable& symbols, std::string& out) {
  out += " bt=[";
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (i != 0) out += " ; ";
    hex(addresses[i], out);
    auto known = symbols.find(addresses[i]);
    if (known == symbols.end()) continue;
    for (size_t k = 0; k < known->second.size(); ++k) {
      const OwnedFrame& f = known->second[k];
      out += k == 0 ? " " : " | ";
      frame(f.function, f.file, f.line, f.column, out);
    }
  }
  out += ']';
}

// Builds one line: the kind, then " key=value" fields.
class Fields {
 public:
  Fields(std::string& out, std::string_view kind) : out_(out) { out_ += kind; }
  Fields& num(std::string_view key, uint64_t v) {
    key_(key);
    out_ += std::to_string(v);
    return *this;
  }
  Fields& hex(std::string_view key, uint64_t v) {
    key_(key);
    reader::hex(v, out_);
    return *this;
  }
  Fields& str(std::string_view key, std::string_view v) {
    key_(key);
    quoted(v, out_);
    return *this;
  }
  Fields& time(uint64_t ns) {
    key_("t");
    out_ += format_time(ns);
    return *this;
  }
  Fields& id(format::AllocId id) { return num("id", id.value); }
  Fields& thread(format::ThreadId t) { return num("thread", t.value); }
  Fields& func(format::Func f) {
    key_("func");
    word(format::func_name(f), out_);
    return *this;
  }

 private:
  void key_(std::string_view key) {
    out_ += ' ';
    out_ += key;
    out_ += '=';
  }
  std::string& out_;
};

struct Line {
  const SymbolTable& symbols;
  std::string& out;

  void operator()(const format::Alloc& e) {
    Fields line(out, "alloc");
    line.id(e.id).time(e.time_ns).thread(e.thread).func(e.func).num("size", e.size).num("n", e.n_samples);
    if (e.alignment != 0) line.num("align", e.alignment);
    if (e.address != 0) line.hex("addr", e.address);
    if (e.realloc_of) line.num("realloc_of", e.realloc_of->value);
    if (e.bytes_per_sample != 0) line.num("every", e.bytes_per_sample);
    backtrace(e.backtrace, symbols, out);
  }
  void operator()(const format::RateChange& e) {
    Fields(out, "rate_change").time(e.time_ns).thread(e.thread).num("every", e.bytes_per_sample);
  }
  void operator()(const format::DepthChange& e) {
    Fields(out, "depth_change").time(e.time_ns).thread(e.thread).num("depth", e.depth);
  }
  void operator()(const format::Free& e) {
    Fields(out, "free").id(e.id).time(e.time_ns).thread(e.thread).func(e.func);
  }
  void operator()(const format::Promote& e) { Fields(out, "promote").id(e.id).time(e.time_ns); }
  void operator()(const format::ThreadStart& e) {
    Fields(out, "thread_start").time(e.time_ns).thread(e.thread).num("tid", e.os_tid);
  }
  void operator()(const format::ThreadName& e) {
    Fields(out, "thread_name").time(e.time_ns).thread(e.thread).str("name", e.name);
  }
  void operator()(const format::ThreadEnd& e) { Fields(out, "thread_end").time(e.time_ns).thread(e.thread); }
  void operator()(const format::ModuleLoad& e) {
    Fields(out, "module_load").time(e.time_ns).hex("start", e.start).hex("end", e.end).hex("bias", e.load_bias);
    out += " build_id=";
    if (e.build_id.empty()) out += '-';
    for (uint8_t b : e.build_id) {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%02x", b);
      out += buf;
    }
    out += " path=";
    quoted(e.path, out);
  }
  void operator()(const format::ModuleUnload& e) {
    Fields(out, "module_unload").time(e.time_ns).hex("start", e.start);
  }
  void operator()(const format::RssSample& e) { Fields(out, "rss").time(e.time_ns).num("bytes", e.rss_bytes); }
  void operator()(const format::Marker& e) {
    Fields(out, "marker").time(e.time_ns).thread(e.thread).str("name", e.name);
  }
  void operator()(const format::CallTotals& e) {
    Fields(out, "call_totals").time(e.time_ns);
    for (unsigned f = 0; f < format::kFuncCount; ++f) {  // only the functions called
      const format::FuncTotal& t = e.totals[f];
      if (t.calls == 0 && t.bytes == 0) continue;
      out += ' ';
      word(format::kFuncNames[f], out);
      out += '=' + std::to_string(t.calls) + '/' + std::to_string(t.bytes);
    }
  }
  void operator()(const format::TraceEnd& e) {
    static constexpr std::string_view kReasons[] = {"exit", "stopped", "signal", "exec"};
    Fields(out, "trace_end").time(e.time_ns);
    const auto r = static_cast<unsigned>(e.reason);
    out += " reason=";
    out += r < std::size(kReasons) ? std::string(kReasons[r]) : "unknown(" + std::to_string(r) + ")";
  }
  void operator()(const format::SymbolDef& e) {
    Fields(out, "symbol").hex("addr", e.address);
    out += " frames=[";
    for (size_t k = 0; k < e.frames.size(); ++k) {
      if (k != 0) out += " | ";
      frame(e.frames[k].function, e.frames[k].file, e.frames[k].line, e.frames[k].column, out);
    }
    out += ']';
  }
};

}  // namespace

std::string format_time(uint64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%" PRIu64 ".%06" PRIu64 "ms", ns / 1000000, ns % 1000000);
  return buf;
}

void dump_header(const format::TraceInfo& info, std::string& out) {
  out += "# trace format=";
  quoted(info.source_format.empty() ? "memloupe" : info.source_format, out);
  out += " version=" + std::to_string(info.version);
  out += " pid=" + std::to_string(info.pid);
  out += info.mode == format::Mode::All ? " mode=all" : " mode=sampled";
  if (info.mode == format::Mode::All && !info.addresses) out += " addresses=no";
  out += " bytes_per_sample=" + std::to_string(info.bytes_per_sample);
  out += " pointer_size=" + std::to_string(info.pointer_size);
  out += " start_wall_ns=" + std::to_string(info.start_wall_ns);
  out += " start_mono_ns=" + std::to_string(info.start_mono_ns);
  out += " host="; quoted(info.host, out);
  out += " executable="; quoted(info.executable, out);
  out += " argv=[";
  for (size_t i = 0; i < info.argv.size(); ++i) {
    if (i != 0) out += ' ';
    quoted(info.argv[i], out);
  }
  out += ']';
}

void dump_event(const format::Event& event, const SymbolTable& symbols, std::string& out) {
  std::visit(Line{symbols, out}, event);
}

uint64_t dump_trace(Reader& reader, std::ostream& out) {
  std::string line;
  dump_header(reader.info(), line);
  out << line << '\n';
  uint64_t events = 0;
  while (const format::Event* event = reader.next()) {
    line.clear();
    dump_event(*event, reader.symbols(), line);
    out << line << '\n';
    ++events;
  }
  return events;
}

void EventCounts::add(const format::Event& event) {
  ++by_kind[event.index()];
  ++events;
  if (auto* a = std::get_if<format::Alloc>(&event)) backtrace_frames += a->backtrace.size();
  std::visit(
      [this](const auto& e) {
        if constexpr (requires { e.time_ns; }) {
          if (!timed || e.time_ns < first_time_ns) first_time_ns = e.time_ns;
          if (!timed || e.time_ns > last_time_ns) last_time_ns = e.time_ns;
          timed = true;
        }
      },
      event);
}

std::string EventCounts::mean_backtrace_length() const {
  if (allocs() == 0) return "0";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", static_cast<double>(backtrace_frames) / static_cast<double>(allocs()));
  return buf;
}

}  // namespace memloupe::reader
