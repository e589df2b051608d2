// The follower's work per event (src/finalize/follow.cc, read_available) on a
// recorded trace, on this one thread: each event of TRACE read and decoded,
// then handed to the finaliser's Collector with `memloupe run`'s tap and
// addon (the analysis index's IndexTap, the types' TypesAddon), as the
// follower does while the program runs (the index fed event by event, not
// rest_at_once's).
//
//   follow_bench TRACE [ROUNDS]
//
// Prints the events, the best time of ROUNDS reads, what the read collected
// (the distinct backtrace addresses) and a CRC-32C of the index built, so a change on
// the path can be checked to leave them alone. Under callgrind,
//   valgrind --tool=callgrind --toggle-collect='follow_read*' follow_bench TRACE
// counts the read's instructions alone (callgrind_annotate's total).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cli/index_tap.h"
#include "finalize/event_collector.h"
#include "format/crc32c.h"
#include "reader/reader.h"
#include "types/finalize_types.h"

namespace {

using namespace memloupe;
using Clock = std::chrono::steady_clock;

struct Round {
  uint64_t events = 0;
  size_t addresses = 0;
  double seconds = 0;
  uint32_t crc = 0;
  size_t index_bytes = 0;
};

// The follower's loop (TraceFollower::read_available), out of line for callgrind.
[[gnu::noinline]] finalize::Collected follow_read(reader::Reader& r, finalize::Collector collector) {
  while (const format::Event* e = r.next()) collector.add_read(*e, r);
  return std::move(collector).finish(r.error());
}

Round read_once(const std::string& path) {
  auto opened = reader::Reader::open(path);
  if (!opened) {
    std::fprintf(stderr, "follow_bench: %s: %s\n", path.c_str(), opened.error().message.c_str());
    std::exit(1);
  }
  reader::Reader& r = **opened;
  cli::IndexTap tap(analysis::IndexWhen::Always);
  types::TypesAddon types;
  tap.begin(r.info());
  Round out;
  const Clock::time_point start = Clock::now();
  const finalize::Collected c = follow_read(r, finalize::Collector(&tap, &types));
  out.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  out.events = c.events;
  out.addresses = c.addresses.size();
  tap.events_over();
  if (const std::optional<std::vector<uint8_t>> index = tap.index({})) {
    out.index_bytes = index->size();
    out.crc = format::crc32c(index->data(), index->size());
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: follow_bench TRACE [ROUNDS]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 1;
  Round best;
  for (int i = 0; i < rounds; ++i) {
    const Round r = read_once(argv[1]);
    if (i == 0 || r.seconds < best.seconds) best = r;
  }
  std::printf("events %llu, read %.1f ms (%.1f ns an event), addresses %zu, index %zu bytes, crc32c %08x\n",
              static_cast<unsigned long long>(best.events), best.seconds * 1e3,
              best.seconds * 1e9 / static_cast<double>(best.events ? best.events : 1), best.addresses, best.index_bytes, best.crc);
  return 0;
}
