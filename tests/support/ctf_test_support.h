// Helpers shared by the CTF unit tests: the sample trace, and owned copies of
// what a reader delivers (events hold views that die at the next event).
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "format/events.h"
#include "reader/reader.h"

namespace memloupe::reader::testing {

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

// janestreet/memtrace_viewer's test trace (tests/data/memtrace/README.md).
inline std::string viewer_trace_path() {
  return std::string(MEMLOUPE_SOURCE_DIR) + "/tests/data/memtrace/viewer_test.ctf";
}

struct AllocRec {
  uint64_t id, time_ns, size;
  uint32_t n_samples, thread;
  std::vector<uint64_t> backtrace;
  bool operator==(const AllocRec&) const = default;
};
// A free ('f') or promotion ('p').
struct RefRec {
  char kind;
  uint64_t id, time_ns;
  bool operator==(const RefRec&) const = default;
};

struct ReadAll {
  format::TraceInfo info;
  std::vector<AllocRec> allocs;
  std::vector<RefRec> refs;
  std::vector<uint64_t> symbol_events;  // addresses, in stream order
  SymbolTable symbols;
  std::optional<Error> error;
  uint64_t events = 0;
  // Every backtrace address had been defined by a symbol event when used.
  bool symbols_before_use = true;
};

inline ReadAll read_all(Reader& reader) {
  ReadAll r;
  r.info = reader.info();
  while (const format::Event* e = reader.next()) {
    ++r.events;
    if (auto* a = std::get_if<format::Alloc>(e)) {
      r.allocs.push_back({a->id.value, a->time_ns, a->size, a->n_samples, a->thread.value,
                          {a->backtrace.begin(), a->backtrace.end()}});
      for (uint64_t address : a->backtrace) {
        if (!reader.symbols().contains(address)) r.symbols_before_use = false;
      }
    } else if (auto* f = std::get_if<format::Free>(e)) {
      r.refs.push_back({'f', f->id.value, f->time_ns});
    } else if (auto* p = std::get_if<format::Promote>(e)) {
      r.refs.push_back({'p', p->id.value, p->time_ns});
    } else if (auto* s = std::get_if<format::SymbolDef>(e)) {
      r.symbol_events.push_back(s->address);
    }
  }
  r.symbols = reader.symbols();
  r.error = reader.error();
  return r;
}

inline bool same_frames(const std::vector<OwnedFrame>& a, const std::vector<OwnedFrame>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].function != b[i].function || a[i].file != b[i].file || a[i].line != b[i].line ||
        a[i].column != b[i].column)
      return false;
  }
  return true;
}

}  // namespace memloupe::reader::testing
