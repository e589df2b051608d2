// Test helper: writes a trace as a script of events with known answers.
// Backtraces and names are owned here; the events' views point into this object,
// so it must outlive (and not be copied while) its events are in use.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "analysis/model.h"

namespace memloupe::analysis::testing {

class Script {
 public:
  explicit Script(format::Mode mode = format::Mode::All, uint64_t bytes_per_sample = 0) {
    info.mode = mode;
    info.bytes_per_sample = bytes_per_sample;
    info.executable = "/bin/test";
  }

  format::AllocId alloc(uint64_t t, uint64_t size, std::vector<uint64_t> stack, uint32_t thread = 0,
                        uint32_t n_samples = 1, std::optional<format::AllocId> realloc_of = {}) {
    format::Alloc a;
    a.id = format::AllocId{next_id_++};
    a.thread = format::ThreadId{thread};
    a.time_ns = t;
    a.size = size;
    a.n_samples = n_samples;
    a.realloc_of = realloc_of;
    a.backtrace = stacks_.emplace_back(std::move(stack));
    events.push_back(a);
    return a.id;
  }
  void free(format::AllocId id, uint64_t t, uint32_t thread = 0) {
    events.push_back(format::Free{id, format::ThreadId{thread}, t, format::Func::Free});
  }
  void rss(uint64_t t, uint64_t bytes) { events.push_back(format::RssSample{t, bytes}); }
  void marker(uint64_t t, std::string name, uint32_t thread = 0) {
    events.push_back(format::Marker{format::ThreadId{thread}, t, names_.emplace_back(std::move(name))});
  }
  void thread(uint32_t id, uint64_t t, uint32_t os_tid, std::string name) {
    events.push_back(format::ThreadStart{format::ThreadId{id}, t, os_tid});
    events.push_back(format::ThreadName{format::ThreadId{id}, t, names_.emplace_back(std::move(name))});
  }
  void end(uint64_t t) { events.push_back(format::TraceEnd{t, format::EndReason::Exit}); }
  // Symbols: `address` resolves to `functions`, innermost (inlined) first.
  void symbol(uint64_t address, std::vector<std::string> functions, std::string file = "a.cc",
              uint32_t line = 1) {
    std::vector<reader::OwnedFrame>& frames = symbols[address];
    for (std::string& f : functions) frames.push_back(reader::OwnedFrame{std::move(f), file, line, 0});
  }

  Model run(const QueryArgs& args = {}) const {
    Expected<Model> m = analyze_events(info, symbols, events, args);
    if (!m) throw std::runtime_error(m.error().message);
    return std::move(m.value());
  }

  format::TraceInfo info;
  reader::SymbolTable symbols;
  std::vector<format::Event> events;

 private:
  uint64_t next_id_ = 0;
  std::deque<std::vector<uint64_t>> stacks_;
  std::deque<std::string> names_;
};

}  // namespace memloupe::analysis::testing
