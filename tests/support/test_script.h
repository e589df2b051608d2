// Test helper: writes a trace as a script of events with known answers.
// Backtraces and names are owned here; the events' views point into this object,
// so it must outlive (and not be copied while) its events are in use.
#pragma once

#include <deque>
#include <string>
#include <utility>
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

  Model run(const QueryArgs& args = {}, Passes passes = Passes::Fewest) const {
    Expected<Model> m = analyze_events(info, symbols, events, args, passes);
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

// A random heap for tests that compare two ways of computing the same answer:
// it grows for `phase` events, then shrinks, then grows again (several new
// maxima), on `threads` threads, and a block is freed by its own thread or
// another. `stack(rng)` makes each allocation's backtrace; `between(i, t)` may
// add other events before event i. Returns the last event's time.
struct RandomHeap {
  int events = 20000;
  int phase = 3000;
  uint32_t threads = 4;
  uint64_t time_steps = 3;  // time advances by [0, time_steps) per event
  uint64_t min_size = 8;
  uint64_t size_span = 5000;
};
template <class Rng, class Stack, class Between>
uint64_t add_random_heap(Script& s, Rng& rng, const RandomHeap& p, Stack stack, Between between) {
  std::vector<std::pair<format::AllocId, uint32_t>> live;
  uint64_t t = 0;
  for (int i = 0; i < p.events; ++i) {
    t += rng() % p.time_steps;
    const auto thread = static_cast<uint32_t>(rng() % p.threads);
    between(i, t);
    const bool grow = (i / p.phase) % 2 == 0 ? rng() % 3 != 0 : rng() % 3 == 0;
    if (grow || live.empty()) {
      const uint64_t size = p.min_size + rng() % p.size_span;
      live.emplace_back(s.alloc(t, size, stack(rng), thread, 1 + static_cast<uint32_t>(size / 4096)), thread);
    } else {
      const size_t k = rng() % live.size();
      s.free(live[k].first, t, rng() % 2 ? live[k].second : thread);
      live[k] = live.back();
      live.pop_back();
    }
  }
  return t;
}

// The worked example the model and view tests share; answers are by hand.
// Stacks, innermost first:
//   P = main → run → parse → push_back (inlined into parse)   at 0xa1
//   L = main → run → load → make_buffer
//   U = main → 0xa3 (no symbols)
//
//   t   event                      live after
//   10  a0 = P 100  (thread 0)       100
//   20  a1 = L 1000 (thread 0)      1100
//   30  free a0     (thread 0)      1000
//   40  a2 = P 200  (thread 1)      1200
//   45  marker "phase 2"
//   50  a3 = U 5000 (thread 0)      6200   <- peak
//   50  free a1     (thread 0)      5200      (same instant, after the peak)
//   60  a4 = L 300  (thread 1)      5500
//   70  free a3     (thread 1)       500      (freed by another thread)
//   80  a5 = P 50   (thread 0)       550
//   90  free a2     (thread 1)       350
//   95  free of an id never allocated; RSS 1 MiB
//  100  end                                 leaked: a4, a5
inline void worked_example(Script& s) {
  s.symbol(0xa1, {"std::vector<int>::push_back", "parse"}, "parse.cc", 12);
  s.symbol(0xb1, {"run"});
  s.symbol(0xc1, {"main"});
  s.symbol(0xa2, {"make_buffer"});
  s.symbol(0xb2, {"load"});
  const std::vector<uint64_t> P = {0xa1, 0xb1, 0xc1}, L = {0xa2, 0xb2, 0xb1, 0xc1}, U = {0xa3, 0xc1};
  s.thread(0, 0, 100, "main");
  s.thread(1, 0, 101, "worker");
  const auto a0 = s.alloc(10, 100, P, 0);
  const auto a1 = s.alloc(20, 1000, L, 0);
  s.free(a0, 30, 0);
  const auto a2 = s.alloc(40, 200, P, 1);
  s.marker(45, "phase 2");
  const auto a3 = s.alloc(50, 5000, U, 0);
  s.free(a1, 50, 0);
  s.alloc(60, 300, L, 1);
  s.free(a3, 70, 1);
  s.alloc(80, 50, P, 0);
  s.free(a2, 90, 1);
  s.free(format::AllocId{999}, 95, 0);
  s.rss(95, 1 << 20);
  s.end(100);
}

}  // namespace memloupe::analysis::testing
