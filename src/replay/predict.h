// The prediction a user can act on: the program's own peak RSS under another
// allocator, from the replays and what the trace recorded. Method and its
// check against real runs: docs/REPLAY.md § Prediction.
#pragma once

#include <cstdint>
#include <optional>

#include "replay/measurements.h"
#include "replay/prepare.h"

namespace memloupe::replay {

// The recorder's own resident memory in an `--all` run, included in the RSS
// samples of the trace: fixed buffers plus its table of live blocks.
uint64_t recorder_rss_estimate(const TraceFacts& facts);
// The same at a point of the run: `events` alloc/free events so far, with at
// most `max_live_blocks` live blocks.
uint64_t recorder_rss_at(uint64_t events, uint64_t max_live_blocks);

// The program's memory that is not its malloc heap, at the trace's highest RSS
// sample: that sample, less the recorder's share then, less what glibc's replay
// held over its baseline at the same point (its Probe op). Without probes, the
// sample against glibc's replayed peak. Absent without an RSS sample.
std::optional<double> non_heap_bytes(const TraceFacts& facts, const Measurements& glibc);

// non_heap + the allocator's replayed peak RSS over the replayer's baseline
// under glibc; that is, the recorded peak less the recorder's share, moved by
// the difference between the two replays' peaks.
std::optional<double> predict_peak_rss(const TraceFacts& facts, const Measurements& glibc,
                                       const Measurements& allocator);

}  // namespace memloupe::replay
