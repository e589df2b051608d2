// The analysis index's work per event on a recorded trace, as the follower
// does it while the program runs (src/finalize/follow.cc): each event of
// TRACE, read and decoded, handed to an IndexBuilder with its backtrace key,
// on this one thread (the index's Handover::Inline, the 2-CPU machine's).
//
//   index_tap_bench TRACE [ROUNDS]
//
// Prints the events, the index's time (a read with it less a read without,
// each the best of ROUNDS: a clock read per event would cost as much as the
// index's work) and a CRC-32C of the index it built, so a change to the
// index's code can be checked to build the same bytes. Under callgrind,
//   valgrind --tool=callgrind --dump-before='*read_once*' index_tap_bench TRACE 1
// dumps the read with the index (part 2) apart from the read without it (the
// last part): part 2's inclusive costs of AggregateBuilder::add(const Free&)
// and add_interned are the index's per-event work, part 2 less the last part
// the whole index. (Not --toggle-collect='memloupe::analysis::*': callgrind
// toggles off again entering a nested match, which left out every
// out-of-line function the per-event ones call.)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "analysis/index.h"
#include "format/crc32c.h"
#include "reader/reader.h"

namespace {

using namespace memloupe;
using Clock = std::chrono::steady_clock;

struct Round {
  uint64_t events = 0;
  double seconds = 0;
  uint32_t crc = 0;
  size_t bytes = 0;
};

// One read of `path`, with the index or without it.
Round read_once(const std::string& path, bool with_index) {
  auto opened = reader::Reader::open(path);
  if (!opened) {
    std::fprintf(stderr, "index_tap_bench: %s: %s\n", path.c_str(), opened.error().message.c_str());
    std::exit(1);
  }
  reader::Reader& r = **opened;
  analysis::IndexBuilder builder(r.info(), analysis::IndexWhen::Always);
  Round out;
  const Clock::time_point start = Clock::now();
  while (const format::Event* e = r.next()) {
    ++out.events;
    if (!with_index) continue;
    // The follower's Collector::add_read: an Alloc with its key, a Free, the rest.
    if (const auto* alloc = std::get_if<format::Alloc>(e)) {
      uint32_t fresh;
      reader::BacktraceKey scratch;
      const reader::BacktraceKey& key = r.alloc_key_view(fresh, scratch);
      builder.add(*alloc, key);
    } else if (const auto* free = std::get_if<format::Free>(e)) {
      builder.add(*free);
    } else {
      builder.add(*e);
    }
  }
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (!with_index) return out;
  builder.events_over();
  const std::optional<std::vector<uint8_t>> index = builder.finish({});
  if (index) {
    out.bytes = index->size();
    out.crc = format::crc32c(index->data(), index->size());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: index_tap_bench TRACE [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
  Round best, bare;
  for (int i = 0; i < rounds; ++i) {
    const Round r = read_once(argv[1], true);
    if (i == 0 || r.seconds < best.seconds) best = r;
    const Round b = read_once(argv[1], false);
    if (i == 0 || b.seconds < bare.seconds) bare = b;
  }
  const double index_s = best.seconds - bare.seconds;
  std::printf("events %llu, read %.1f ms, index %.1f ms (%.1f ns an event), index %zu bytes, crc32c %08x\n",
              static_cast<unsigned long long>(best.events), bare.seconds * 1e3, index_s * 1e3,
              index_s * 1e9 / static_cast<double>(best.events ? best.events : 1), best.bytes, best.crc);
  return 0;
}
