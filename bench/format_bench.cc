// Trace format benchmark: encode and decode throughput and the size of the
// encoding, on synthetic event streams built from a model of a real program.
//
// The model: ~2,000 functions in three modules (the executable, libstdc++, libc)
// calling each other along a random call graph; allocation sites are walks from
// main down that graph (depth 10-60, some functions recursive, most sites
// ending in operator new / a container's allocate), chosen with a Zipf law.
// Sampled streams draw sites independently (samples are far apart); Mode::All
// streams repeat the last site often (loops), hand out addresses like a
// size-class allocator with per-thread LIFO free lists, and free most blocks soon.
//
// Reference points printed with the results: memtrace publishes about 25 bytes
// per sample (alloc + collect, backtrace included); heaptrack about 3.0 bytes
// per call after compression.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <vector>

#include "analysis/index.h"
#include "finalize/compact.h"
#include "format/crc32c.h"
#include "format/encoder.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"

namespace {

using namespace memloupe;
using format::Mode;

class Program {
 public:
  explicit Program(uint64_t seed) : rng_(seed) {
    const uint64_t module_base[3] = {0x555555554000ull, 0x7ffff7a00000ull, 0x7ffff7800000ull};
    for (unsigned f = 0; f < kFuncs; ++f) {
      const unsigned m = f < 1400 ? 0 : f < 1800 ? 1 : 2;
      base_.push_back(module_base[m] + f * 0x1c0 + below(0x40));
      recursive_.push_back(below(10) == 0);
      std::vector<unsigned> callees(1 + below(8));
      for (unsigned& c : callees) c = static_cast<unsigned>(below(kFuncs));
      callees_.push_back(callees);
    }
    for (unsigned s = 0; s < kSites; ++s) sites_.push_back(make_site());
    // Zipf(1.0) over sites.
    double sum = 0;
    for (unsigned r = 1; r <= kSites; ++r) cdf_.push_back(sum += 1.0 / r);
    for (double& c : cdf_) c /= sum;
    for (unsigned s = 0; s < kSites; ++s) size_.push_back(16 << below(12));
  }

  uint64_t below(uint64_t n) { return rng_() % n; }
  unsigned zipf_site() {
    const double u = std::uniform_real_distribution<>(0, 1)(rng_);
    return static_cast<unsigned>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }
  const std::vector<uint64_t>& site(unsigned s) const { return sites_[s]; }
  uint64_t site_size(unsigned s) { return below(3) ? size_[s] : size_[s] + below(size_[s]); }
  std::mt19937_64& rng() { return rng_; }

 private:
  static constexpr unsigned kFuncs = 2000, kSites = 5000;
  uint64_t ret_addr(unsigned f, unsigned call) const { return base_[f] + 0x13 + call * 0x17; }

  std::vector<uint64_t> make_site() {
    std::vector<uint64_t> outer;  // main first
    const unsigned depth = 10 + static_cast<unsigned>(below(51));
    unsigned f = 0;
    while (outer.size() < depth) {
      if (recursive_[f] && below(3) != 0) {
        const unsigned n = 1 + static_cast<unsigned>(below(12));
        for (unsigned i = 0; i < n && outer.size() < depth; ++i) outer.push_back(ret_addr(f, 7));
      }
      // Callers favour their first callees.
      const auto& cs = callees_[f];
      const unsigned call = static_cast<unsigned>(std::min(below(cs.size()), below(cs.size())));
      outer.push_back(ret_addr(f, call));
      f = cs[call];
    }
    // The innermost frames: operator new, often under a container's allocate.
    if (below(10) < 7) {
      if (below(2)) outer.push_back(ret_addr(1400 + static_cast<unsigned>(below(20)), 0));
      outer.push_back(ret_addr(1420, 0));
    }
    std::reverse(outer.begin(), outer.end());
    return outer;
  }

  std::mt19937_64 rng_;
  std::vector<uint64_t> base_;
  std::vector<bool> recursive_;
  std::vector<std::vector<unsigned>> callees_;
  std::vector<std::vector<uint64_t>> sites_;
  std::vector<double> cdf_;
  std::vector<uint64_t> size_;
};

struct Op {
  bool alloc;
  uint32_t thread;
  uint64_t time_ns;
  uint64_t size;       // alloc
  uint64_t address;    // alloc, Mode::All
  uint32_t n_samples;  // alloc
  unsigned site;       // alloc
  uint64_t id;         // free: which allocation (= its ordinal)
  format::Func func;
};

struct Workload {
  Mode mode;
  std::unique_ptr<Program> program;
  std::vector<Op> ops;
  uint64_t allocs = 0;
};

// `n_allocs` allocations, each freed at some later point (all by the end).
Workload make_workload(Mode mode, uint64_t n_allocs) {
  Workload w{mode, std::make_unique<Program>(42), {}, n_allocs};
  Program& p = *w.program;
  const bool all = mode == Mode::All;
  using Pending = std::pair<uint64_t, uint64_t>;  // (free at step, id)
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> frees;
  std::map<uint64_t, std::vector<uint64_t>> free_lists;  // (thread, size) -> LIFO of addresses
  std::vector<uint64_t> addr_of(n_allocs);
  uint64_t bump = 0x55555576a000ull, now = 0, step = 0;
  uint32_t thread = 0;
  unsigned site = 0;
  std::exponential_distribution<> gap(all ? 1 / 150.0 : 1 / 200000.0);  // ns between events
  auto advance = [&] { now += static_cast<uint64_t>(gap(p.rng())); };
  std::vector<uint64_t> size_of(n_allocs);
  auto free_one = [&](uint64_t id) {
    advance();
    w.ops.push_back({false, thread, now, 0, 0, 0, 0, id, format::Func::Free});
    // Like a tcache: a freed block goes to the freeing thread's list for its size.
    if (all) free_lists[thread * 100000ull + (size_of[id] + 15) / 16].push_back(addr_of[id]);
  };
  for (uint64_t id = 0; id < n_allocs; ++id, ++step) {
    while (!frees.empty() && frees.top().first <= step) {
      const uint64_t victim = frees.top().second;
      frees.pop();
      free_one(victim);
    }
    if (p.below(10) < 2) thread = static_cast<uint32_t>(p.below(4));
    site = all && p.below(2) ? site : p.zipf_site();
    const uint64_t size = p.site_size(site);
    uint64_t address = 0;
    if (all) {
      auto& fl = free_lists[thread * 100000ull + (size + 15) / 16];
      if (!fl.empty()) {
        address = fl.back();
        fl.pop_back();
      } else {
        address = bump;
        bump += (size + 31) & ~uint64_t{15};
      }
      addr_of[id] = address;
    }
    const uint32_t n_samples = all ? 1 : static_cast<uint32_t>(1 + size / (512 * 1024));
    advance();
    w.ops.push_back({true, thread, now, size, address, n_samples, site, 0, format::Func::New});
    const uint64_t r = p.below(100);
    const uint64_t life = r < 60 ? p.below(8) : r < 90 ? p.below(1000) : p.below(100000);
    frees.push({step + 1 + life, id});
    size_of[id] = size;
  }
  while (!frees.empty()) {
    free_one(frees.top().second);
    frees.pop();
  }
  return w;
}

class Sink final : public format::ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override {
    bytes.insert(bytes.end(), c.begin(), c.end());
  }
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> encode(const Workload& w) {
  Sink sink;
  sink.bytes.resize(format::kMaxFileHeader);
  format::HeaderFields h;
  h.mode = w.mode;
  h.bytes_per_sample = w.mode == Mode::All ? 0 : 512 * 1024;
  sink.bytes.resize(format::encode_file_header(h, sink.bytes));
  auto enc = std::make_unique<format::Encoder>(sink, w.mode);
  for (const Op& op : w.ops) {
    if (op.alloc) {
      format::AllocRecord r;
      r.thread = format::ThreadId{op.thread};
      r.time_ns = op.time_ns;
      r.size = op.size;
      r.address = op.address;
      r.n_samples = op.n_samples;
      r.func = op.func;
      r.backtrace = w.program->site(op.site);
      enc->alloc(r);
    } else {
      enc->free(format::AllocId{op.id}, format::ThreadId{op.thread}, op.time_ns, op.func);
    }
  }
  enc->flush();
  return std::move(sink.bytes);
}

const Workload& workload(Mode mode) {
  static const Workload sampled = make_workload(Mode::Sampled, 200'000);
  static const Workload all = make_workload(Mode::All, 1'000'000);
  return mode == Mode::All ? all : sampled;
}

void BM_Encode(benchmark::State& state, Mode mode) {
  const Workload& w = workload(mode);
  std::vector<uint8_t> out;
  for (auto _ : state) out = encode(w);
  const size_t bytes = out.size();
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * w.ops.size()));
  // A fingerprint of the output: encoder optimisations must leave it unchanged
  // (the format is fixed), so compare it before and after.
  state.counters["crc32c"] = format::crc32c(out.data(), out.size());
  state.counters["bytes/event"] = static_cast<double>(bytes) / static_cast<double>(w.ops.size());
  if (mode == Mode::Sampled) {
    state.counters["bytes/sample(alloc+free)"] =
        static_cast<double>(bytes) / static_cast<double>(w.allocs);
    state.counters["memtrace_ref_bytes/sample"] = 25;
  } else {
    state.counters["bytes/call(raw)"] = static_cast<double>(bytes) / static_cast<double>(w.ops.size());
  }
}

void BM_Decode(benchmark::State& state, Mode mode) {
  const Workload& w = workload(mode);
  const std::vector<uint8_t> bytes = encode(w);
  for (auto _ : state) {
    auto r = reader::Reader::from_bytes(bytes);
    uint64_t n = 0;
    while ((*r)->next()) ++n;
    if (n != w.ops.size() || (*r)->error()) state.SkipWithError("decode mismatch");
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * w.ops.size()));
}

// The decoder alone on a real trace (MEMLOUPE_BENCH_TRACE: a raw or finalised
// trace, e.g. one `--all` recording of the suite's workloads): the synthetic
// streams above have other reference and address patterns than real programs.
// `index`: and the analysis index built on it as the follower of `memloupe run
// --all` builds it (src/finalize/follow.cc): every event handed to an
// IndexBuilder with its backtrace key on this thread (the hand-over while the
// program runs on one or two CPUs, analysis/index_aggregate.h), then what
// needs the events to be over.
void BM_DecodeFile(benchmark::State& state, bool index) {
  const char* path = std::getenv("MEMLOUPE_BENCH_TRACE");
  if (!path) return state.SkipWithError("set MEMLOUPE_BENCH_TRACE to a trace");
  std::ifstream f(path, std::ios::binary);
  const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(f), {}};
  uint64_t n = 0;
  for (auto _ : state) {
    auto r = reader::Reader::from_bytes(bytes);
    if (!r) return state.SkipWithError("not a trace");
    std::optional<analysis::IndexBuilder> builder;
    if (index) builder.emplace((*r)->info());
    n = 0;
    while (const format::Event* e = (*r)->next()) {
      if (builder) builder->add(*e, (*r)->backtrace_key());
      ++n;
    }
    if ((*r)->error()) return state.SkipWithError("decode error");
    if (builder) builder->events_over();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}

// The finaliser's step: regroup the events into column-form chunks and compress them.
void BM_Compact(benchmark::State& state, Mode mode, int level) {
  const Workload& w = workload(mode);
  const std::vector<uint8_t> raw = encode(w);
  size_t out = 0;
  for (auto _ : state) {
    auto c = finalize::compact_trace(raw, {.zstd_level = level});
    out = c->bytes.size();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * w.ops.size()));
  const double per = mode == Mode::All ? static_cast<double>(w.ops.size()) : static_cast<double>(w.allocs);
  state.counters[mode == Mode::All ? "bytes/call(zstd)" : "bytes/sample(zstd)"] =
      static_cast<double>(out) / per;
  state.counters[mode == Mode::All ? "bytes/call(raw)" : "bytes/sample(raw)"] =
      static_cast<double>(raw.size()) / per;
  if (mode == Mode::All) state.counters["heaptrack_ref_bytes/call"] = 3.0;
  else state.counters["memtrace_ref_bytes/sample"] = 25;
}

BENCHMARK_CAPTURE(BM_Encode, sampled, Mode::Sampled)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Encode, all, Mode::All)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decode, sampled, Mode::Sampled)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Decode, all, Mode::All)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeFile, decode, false)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodeFile, index, true)->Unit(benchmark::kMillisecond);
// Level 6 is what `memloupe run` finalises with (src/finalize/finalize.h).
BENCHMARK_CAPTURE(BM_Compact, sampled_zstd6, Mode::Sampled, 6)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compact, all_zstd3, Mode::All, 3)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compact, all_zstd6, Mode::All, 6)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Compact, all_zstd19, Mode::All, 19)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
