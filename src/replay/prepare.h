// Preparation: an `--all` trace -> per-thread op streams (op_file.h), decoded
// once, before anything is timed. Runs in the CLI process, with the reader.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "format/expected.h"
#include "reader/reader.h"
#include "replay/op_file.h"

namespace memloupe::replay {

// An RSS sample of the trace, with what the recorder held then (predict.h).
struct RssPoint {
  uint64_t rss_bytes = 0;
  uint64_t events = 0;           // allocation and free events before it
  uint64_t max_live_blocks = 0;  // up to it
};

// What the trace says, in trace order (the recorded linearisation).
struct TraceFacts {
  uint32_t threads = 0;            // recorded threads that made at least one call
  uint64_t alloc_calls = 0;        // allocating calls, reallocs included (= Alloc events)
  uint64_t free_calls = 0;         // frees, not counting the free half of a realloc
  uint64_t realloc_calls = 0;      // reallocs of a recorded block (one Alloc + one Free event each)
  uint64_t cross_thread_frees = 0; // frees and reallocs of a block another thread allocated
  uint64_t waits = 0;              // Wait ops the preparation emitted (all kinds)
  uint64_t unmatched_frees = 0;    // frees of blocks the trace never allocated (skipped)
  uint64_t ideal_peak_bytes = 0;   // peak of live requested bytes
  uint64_t max_live_blocks = 0;
  uint64_t recorded_peak_rss_bytes = 0;  // highest RSS sample (0: none)
  // The RSS samples that became Probe ops, by probe index: the replayer reads
  // its own RSS at the same point of the replay (predict.h).
  std::vector<RssPoint> rss_points;
  uint64_t duration_ns = 0;        // time of the last event
  std::optional<Error> damage;     // the reader stopped here; everything before was prepared
};

// How close the replay's interleaving stays to the trace's (docs/REPLAY.md §
// Threads). The trace's calls are cut into windows of `window` calls in trace
// order; a thread starts its calls of window w only once every other thread has
// run all its calls of the windows before w. Without this a thread whose
// program was held back by another (a producer waiting for room in a queue)
// would run ahead, and the heap would hold more than the program ever did.
// 0: only the waits the blocks need.
struct PrepareOptions {
  uint64_t window = 1024;
};

struct Prepared {
  TraceFacts facts;
  uint64_t slots = 0;
  std::vector<std::vector<Op>> threads;  // ops per replay thread; thread 0 runs on the main thread
  uint64_t total_ops() const;
};

// Reads every event of `reader`. Errors: a sampled trace (a replay needs every
// call), a thread with more ops than a progress word counts. Damage is not an
// error: facts.damage says where the prepared streams stop.
Expected<Prepared> prepare(reader::Reader& reader, const PrepareOptions& options = {});

// Writes the op file (op_file.h) to `fd` from its current position.
Expected<bool> write_op_file(const Prepared& prepared, int fd);

}  // namespace memloupe::replay
