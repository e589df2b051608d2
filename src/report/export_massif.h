// massif.out export, as Valgrind's massif writes it (time unit: ms), read by
// ms_print and massif-visualizer.
//
// Snapshots: time 0, then the ends of up to 98 time buckets spread evenly over
// the trace, and the heap's peak as `heap_tree=peak`: at most 100 snapshots,
// massif's own limit. Every 10th snapshot and the last are detailed.
// A detailed tree starts at the allocation functions and branches towards the
// callers (innermost frame first, inlined frames as their own nodes), children
// by decreasing bytes; children under 1% of the snapshot's heap are merged into
// one "in N places, all below massif's threshold (1.00%)" line, as massif does.
//
// The bytes of a snapshot are the sum of its sites' live bytes rounded to whole
// bytes, so every tree adds up exactly (ms_print rejects a node larger than the
// snapshot total).
#pragma once

#include <ostream>
#include <string>

#include "report/profile.h"

namespace memloupe::report {

void write_massif(const Profile& profile, std::ostream& out);

}  // namespace memloupe::report
