#include "support/test_streams.h"

#include <algorithm>
#include <memory>
#include <random>
#include <sstream>

#include "reader/reader.h"

namespace memloupe::reader::testing {

using namespace format;

namespace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

std::string hex(std::span<const uint8_t> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) {
    s += d[x >> 4];
    s += d[x & 15];
  }
  return s;
}

}  // namespace

std::string event_text(const Event& ev) {
  std::ostringstream o;
  std::visit(
      Overloaded{
          [&](const Alloc& a) {
            o << "alloc id=" << a.id.value << " t=" << a.thread.value << " time=" << a.time_ns
              << " size=" << a.size << " addr=" << a.address << " align=" << a.alignment
              << " n=" << a.n_samples << " func=" << func_name(a.func) << " realloc_of="
              << (a.realloc_of ? std::to_string(a.realloc_of->value) : "-") << " every=" << a.bytes_per_sample
              << " bt=";
            for (uint64_t f : a.backtrace) o << std::hex << f << std::dec << ',';
          },
          [&](const Free& f) {
            o << "free id=" << f.id.value << " t=" << f.thread.value << " time=" << f.time_ns
              << " func=" << func_name(f.func);
          },
          [&](const ThreadStart& e) {
            o << "thread_start t=" << e.thread.value << " time=" << e.time_ns << " tid=" << e.os_tid;
          },
          [&](const ThreadName& e) {
            o << "thread_name t=" << e.thread.value << " time=" << e.time_ns << " name=" << e.name;
          },
          [&](const ThreadEnd& e) { o << "thread_end t=" << e.thread.value << " time=" << e.time_ns; },
          [&](const RateChange& e) {
            o << "rate_change t=" << e.thread.value << " time=" << e.time_ns << " every=" << e.bytes_per_sample;
          },
          [&](const DepthChange& e) {
            o << "depth_change t=" << e.thread.value << " time=" << e.time_ns << " depth=" << e.depth;
          },
          [&](const ModuleLoad& e) {
            o << "module_load time=" << e.time_ns << " " << e.start << "-" << e.end
              << " bias=" << e.load_bias << " path=" << e.path << " id=" << hex(e.build_id);
          },
          [&](const ModuleUnload& e) { o << "module_unload time=" << e.time_ns << " " << e.start; },
          [&](const RssSample& e) { o << "rss time=" << e.time_ns << " " << e.rss_bytes; },
          [&](const Marker& e) {
            o << "marker t=" << e.thread.value << " time=" << e.time_ns << " name=" << e.name;
          },
          [&](const CallTotals& e) {
            o << "totals time=" << e.time_ns;
            for (const FuncTotal& t : e.totals) o << ' ' << t.calls << '/' << t.bytes;
          },
          [&](const TraceEnd& e) {
            o << "end time=" << e.time_ns << " reason=" << static_cast<int>(e.reason);
          },
          [&](const SymbolDef& e) {
            o << "symbol " << std::hex << e.address << std::dec;
            for (const SymbolFrame& f : e.frames)
              o << " [" << f.function << '|' << f.file << ':' << f.line << ':' << f.column << ']';
          },
          [&](const Promote& e) { o << "promote id=" << e.id.value << " time=" << e.time_ns; },
      },
      ev);
  return o.str();
}

HeaderFields test_header(Mode mode, bool addresses, uint32_t time_unit_us) {
  HeaderFields h;
  h.time_unit_us = time_unit_us;
  h.mode = mode;
  h.addresses = addresses;
  h.bytes_per_sample = mode == Mode::All ? 0 : 65536;
  h.pid = 4242;
  h.start_wall_ns = 1700000000123456789ull;
  h.start_mono_ns = 987654321;
  h.host = "testhost";
  h.executable = "/usr/bin/example";
  h.argv_nul_separated = std::string_view("example\0--flag\0\0last", 20);
  return h;
}

namespace {

// A random program: functions with a few callees each, walked from main.
class Generator {
 public:
  Generator(uint64_t seed, const StreamOptions& o) : rng_(seed), o_(o) {
    for (unsigned f = 0; f < kFuncs; ++f)
      for (unsigned c = 0; c < 4; ++c) callees_[f][c] = static_cast<unsigned>(rng_() % kFuncs);
  }

  uint64_t below(uint64_t n) { return n ? rng_() % n : 0; }
  bool chance(double p) { return std::uniform_real_distribution<>(0, 1)(rng_) < p; }

  std::vector<uint64_t> backtrace() {
    unsigned depth = 1 + static_cast<unsigned>(below(o_.max_depth));
    if (chance(0.1)) depth = 0;
    std::vector<uint64_t> outer;
    if (o_.chaotic) {
      for (unsigned i = 0; i < depth; ++i) outer.push_back(chance(0.5) ? rng_() : below(64));
    } else {
      unsigned f = 0;
      while (outer.size() < depth) {
        unsigned site = static_cast<unsigned>(below(chance(0.8) ? 1 : 4));
        uint64_t ret = 0x555555554000ull + f * 0x240 + site * 0x11;
        unsigned repeat = o_.recursive && chance(0.05) ? 1 + static_cast<unsigned>(below(40)) : 1;
        for (unsigned r = 0; r < repeat && outer.size() < depth; ++r) outer.push_back(ret);
        f = callees_[f][std::min<uint64_t>(below(8), 3)];
      }
    }
    std::reverse(outer.begin(), outer.end());  // innermost first
    return outer;
  }

  std::mt19937_64 rng_;
  const StreamOptions& o_;
  static constexpr unsigned kFuncs = 400;
  unsigned callees_[kFuncs][4];
};

struct Live {
  uint64_t id;
  uint64_t size;
  uint64_t address;
};

}  // namespace

Stream make_stream(uint64_t seed, const StreamOptions& o) {
  Stream s;
  s.bytes.resize(kMaxFileHeader);
  s.bytes.resize(encode_file_header(test_header(o.mode, o.addresses, o.time_unit_us), s.bytes));
  VectorSink sink(s.bytes, &s.chunk_ends);
  auto enc = std::make_unique<Encoder>(
      sink, o.mode, Encoder::Options{.addresses = o.addresses, .columns = o.columns, .time_unit_us = o.time_unit_us});
  Generator g(seed, o);
  const bool all = o.mode == Mode::All;
  const bool addresses = all && o.addresses;  // delivered by the reader

  uint64_t now = 0, last_tick = 0;
  const uint64_t tick_ns = uint64_t{o.time_unit_us} * 1000;
  uint32_t thread = 0;
  std::vector<Live> live;
  std::vector<uint64_t> freed_addrs;
  auto time = [&] {
    const unsigned kind = static_cast<unsigned>(g.below(10));
    if (kind < 3) now += g.below(1000);
    else if (kind < 8) now += g.below(2'000'000);
    else if (kind < 9) now += g.below(1ull << 40);
    else if (now > 5000) now -= g.below(5000);  // threads race for the lock: clamped
    last_tick = std::max(last_tick, now / tick_ns);
    return std::pair{now, last_tick * tick_ns};
  };
  auto pick_thread = [&] {
    if (g.chance(0.15)) {
      const uint32_t choices[] = {0, 1, 2, 3, 30, 31, 1000, UINT32_MAX};
      thread = o.many_threads && g.chance(0.5) ? 100 + static_cast<uint32_t>(g.below(8))
                                               : choices[g.below(o.huge_thread_ids ? 8 : 6)];
    }
    return ThreadId{thread};
  };
  auto alloc_func = [&] {
    for (;;) {
      auto f = static_cast<Func>(g.below(kFuncCount));
      if (func_allocates(f) && !func_frees(f)) return f;
    }
  };
  auto free_func = [&] {
    for (;;) {
      auto f = static_cast<Func>(g.below(kFuncCount));
      if (func_frees(f) && !func_allocates(f)) return f;
    }
  };
  auto record = [&](Func func) {
    AllocRecord r;
    r.thread = pick_thread();
    r.size = g.chance(0.7) ? g.below(200) : g.chance(0.9) ? g.below(1 << 20) : g.rng_();
    r.alignment = g.chance(0.9) ? 0 : 1u << g.below(13);
    r.n_samples = g.chance(0.8) ? 1 : static_cast<uint32_t>(g.chance(0.9) ? g.below(100) : g.rng_());
    r.func = func;
    if (all) {
      const unsigned kind = static_cast<unsigned>(g.below(4));
      if (kind == 0 && !freed_addrs.empty()) r.address = freed_addrs.back();
      else if (kind == 1 && !live.empty()) r.address = live.back().address + g.below(4096);
      else if (kind == 2) r.address = g.rng_();
      else r.address = 0x7f0000000000ull + g.below(1ull << 30) * 16;
    } else {
      r.address = g.rng_();  // ignored in sampled mode
    }
    return r;
  };
  auto expect_alloc = [&](const AllocRecord& r, uint64_t id, uint64_t t, const std::vector<uint64_t>& bt,
                          std::optional<AllocId> realloc_of) {
    Alloc a{AllocId{id}, r.thread, t, r.size, addresses ? r.address : 0, r.alignment, r.n_samples,
            r.func, realloc_of, {}};
    std::vector<uint64_t> kept(bt.begin(), bt.begin() + std::min<size_t>(bt.size(), 256));
    a.backtrace = kept;
    s.expected.push_back(event_text(a));
    live.push_back({id, r.size, all ? r.address : 0});  // the same draws with or without addresses
  };
  std::vector<std::vector<uint64_t>> recent_bts;

  for (unsigned i = 0; i < o.events; ++i) {
    const unsigned kind = static_cast<unsigned>(g.below(100));
    if (kind < 40 || live.empty()) {
      AllocRecord r = record(alloc_func());
      std::vector<uint64_t> bt = !recent_bts.empty() && g.chance(0.5)
                                     ? recent_bts[g.below(recent_bts.size())]
                                     : g.backtrace();
      if (g.chance(0.01)) bt.resize(300, 0x1234);  // deeper than kMaxFrames
      if (recent_bts.size() < 64) recent_bts.push_back(bt); else recent_bts[g.below(64)] = bt;
      r.backtrace = bt;
      auto [t, expect_t] = time();
      r.time_ns = t;
      const AllocId id = enc->alloc(r);
      expect_alloc(r, id.value, expect_t, bt, std::nullopt);
    } else if (kind < 75) {
      const size_t at = g.chance(0.5) ? live.size() - 1 : g.below(live.size());
      const Live l = live[at];
      live.erase(live.begin() + static_cast<long>(at));
      if (l.address) freed_addrs.push_back(l.address);
      const ThreadId th = pick_thread();
      const Func f = free_func();
      auto [t, expect_t] = time();
      enc->free(AllocId{l.id}, th, t, f);
      s.expected.push_back(event_text(Free{AllocId{l.id}, th, expect_t, f}));
    } else if (kind < 85) {
      const size_t at = g.below(live.size());
      const Live l = live[at];
      live.erase(live.begin() + static_cast<long>(at));
      if (l.address) freed_addrs.push_back(l.address);
      AllocRecord r = record(g.chance(0.5) ? Func::Realloc : Func::Reallocarray);
      std::vector<uint64_t> bt = g.backtrace();
      r.backtrace = bt;
      auto [t, expect_t] = time();
      r.time_ns = t;
      const AllocId id = enc->realloc(AllocId{l.id}, r);
      s.expected.push_back(event_text(Free{AllocId{l.id}, r.thread, expect_t, r.func}));
      expect_alloc(r, id.value, expect_t, bt, AllocId{l.id});
    } else if (o.rare_events) {
      auto [t, expect_t] = time();
      const ThreadId th{static_cast<uint32_t>(g.below(5))};
      std::string name(g.chance(0.02) ? 5000 : g.below(40), 'a' + static_cast<char>(g.below(26)));
      const std::string kept = name.substr(0, 4096);
      switch (g.below(9)) {
        case 0: {
          const uint32_t tid = static_cast<uint32_t>(g.rng_());
          enc->thread_start(th, t, tid);
          s.expected.push_back(event_text(ThreadStart{th, expect_t, tid}));
          break;
        }
        case 1:
          enc->thread_name(th, t, name);
          s.expected.push_back(event_text(ThreadName{th, expect_t, kept}));
          break;
        case 2:
          enc->thread_end(th, t);
          s.expected.push_back(event_text(ThreadEnd{th, expect_t}));
          break;
        case 3: {
          std::vector<uint8_t> id(g.below(80));
          for (uint8_t& b : id) b = static_cast<uint8_t>(g.rng_());
          ModuleLoad m{t, g.rng_() >> 1, 0, g.rng_(), name, id};
          m.end = m.start + g.below(1 << 30);
          enc->module_load(m);
          m.time_ns = expect_t;
          m.path = kept;
          m.build_id = std::span(id).first(std::min<size_t>(id.size(), 64));
          s.expected.push_back(event_text(m));
          break;
        }
        case 4: {
          const uint64_t start = g.rng_();
          enc->module_unload(t, start);
          s.expected.push_back(event_text(ModuleUnload{expect_t, start}));
          break;
        }
        case 5: {
          const uint64_t rss = g.rng_() >> g.below(64);
          enc->rss(t, rss);
          s.expected.push_back(event_text(RssSample{expect_t, rss}));
          break;
        }
        case 6:
          enc->marker(th, t, name);
          s.expected.push_back(event_text(Marker{th, expect_t, kept}));
          break;
        case 7: {
          CallTotals c{t, {}};
          for (FuncTotal& f : c.totals) f = {g.rng_() >> g.below(64), g.rng_() >> g.below(64)};
          enc->call_totals(c);
          c.time_ns = expect_t;
          s.expected.push_back(event_text(c));
          break;
        }
        default:
          if (g.chance(0.3)) enc->flush();
          enc->rss(t, 0);
          s.expected.push_back(event_text(RssSample{expect_t, 0}));
      }
    }
    if (o.flush_often && g.chance(0.05)) enc->flush();
  }
  auto [t, expect_t] = time();
  enc->trace_end(t, EndReason::Exit);
  s.expected.push_back(event_text(TraceEnd{expect_t, EndReason::Exit}));
  s.allocs = enc->next_id().value;
  return s;
}

std::vector<std::string> read_all(std::vector<uint8_t> bytes, std::string* error) {
  std::vector<std::string> out;
  auto r = Reader::from_bytes(std::move(bytes));
  if (!r) {
    if (error) *error = r.error().message;
    return out;
  }
  while (const Event* e = (*r)->next()) out.push_back(event_text(*e));
  if (error) *error = (*r)->error() ? (*r)->error()->message : "";
  return out;
}

}  // namespace memloupe::reader::testing
