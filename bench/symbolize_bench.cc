// Symbolisation throughput: distinct return addresses resolved per second to
// inlined frame lists, as the finaliser does for a trace.
//
// Addresses are spread evenly over a module's executable segment (real
// return addresses cluster more, which only helps). Two modules:
//   libc  - stripped, its DWARF from the distribution's debug package found by
//           build-id (skipped when /usr/lib/debug has no file for it);
//   self  - this benchmark, built with the project's flags (-O2 -g).
// "cold" builds a new Symbolizer per iteration, so opening the file and
// loading its DWARF are included, as in one `memloupe symbolize`; "warm"
// reuses one, giving the per-address cost alone.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <filesystem>

#include "symbolize/loaded_modules.h"
#include "symbolize/symbolizer.h"

namespace {

using memloupe::symbolize::AddressInModule;
using memloupe::symbolize::ModuleIndex;
using memloupe::symbolize::ModuleMap;
using memloupe::symbolize::Symbolizer;

struct Target {
  ModuleMap map;
  uint64_t text_start = 0, text_end = 0;  // the executable segment
  bool ok = false;
};

Target target_containing(uint64_t address) {
  Target t;
  auto module = memloupe::symbolize::loaded_module_at(address);
  if (!module) return t;
  struct Range {
    uint64_t address, start = 0, end = 0;
  } range{address};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& r = *static_cast<Range*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const uint64_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
          if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && r.address >= lo && r.address < hi) {
            r.start = lo;
            r.end = hi;
          }
        }
        return 0;
      },
      &range);
  memloupe::format::ModuleLoad load{0, module->start, module->end, module->load_bias, module->path,
                                    module->build_id};
  t.map.load(load);
  t.text_start = range.start;
  t.text_end = range.end;
  t.ok = range.end > range.start;
  return t;
}

std::vector<AddressInModule> spread(const Target& t, size_t n) {
  std::vector<AddressInModule> out;
  for (size_t i = 0; i < n; ++i) {
    out.push_back({t.text_start + 1 + (t.text_end - t.text_start - 1) * i / n, ModuleIndex{0}});
  }
  return out;
}

void report(benchmark::State& state, const std::vector<std::vector<memloupe::reader::OwnedFrame>>& r) {
  size_t known = 0, frames = 0;
  for (const auto& f : r) {
    known += !f.empty();
    frames += f.size();
  }
  state.counters["known"] = static_cast<double>(known) / static_cast<double>(r.size());
  state.counters["frames"] = known ? static_cast<double>(frames) / static_cast<double>(known) : 0;
}

void run(benchmark::State& state, const Target& t, bool warm) {
  if (!t.ok) {
    state.SkipWithError("module not found");
    return;
  }
  const auto addresses = spread(t, static_cast<size_t>(state.range(0)));
  Symbolizer reused;
  if (warm) benchmark::DoNotOptimize(reused.symbolize(t.map, addresses));
  std::vector<std::vector<memloupe::reader::OwnedFrame>> result;
  for (auto _ : state) {
    if (warm) {
      result = reused.symbolize(t.map, addresses);
    } else {
      Symbolizer fresh;
      result = fresh.symbolize(t.map, addresses);
    }
    benchmark::DoNotOptimize(result.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * state.range(0));
  report(state, result);
}

const Target& libc() {
  static const Target t = [] {
    Target lt = target_containing(reinterpret_cast<uint64_t>(dlsym(RTLD_DEFAULT, "malloc")));
    // Without its debug file libc has only exported names: not the case to measure.
    const auto& m = lt.map.modules();
    if (!m.empty() && m[0].build_id.size() > 1) {
      const std::string id = memloupe::symbolize::hex(m[0].build_id);
      lt.ok = lt.ok && std::filesystem::exists("/usr/lib/debug/.build-id/" + id.substr(0, 2) + "/" +
                                                 id.substr(2) + ".debug");
    }
    return lt;
  }();
  return t;
}

const Target& self() {
  static const Target t = target_containing(reinterpret_cast<uint64_t>(&spread));
  return t;
}

void BM_LibcCold(benchmark::State& s) { run(s, libc(), false); }
void BM_LibcWarm(benchmark::State& s) { run(s, libc(), true); }
void BM_SelfCold(benchmark::State& s) { run(s, self(), false); }
void BM_SelfWarm(benchmark::State& s) { run(s, self(), true); }

BENCHMARK(BM_LibcCold)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LibcWarm)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SelfCold)->Arg(10'000)->Arg(100'000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SelfWarm)->Arg(100'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
