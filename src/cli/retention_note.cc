#include "cli/retention_note.h"

#include "report/text_format.h"
#include "retention/snapshot_load.h"

namespace memloupe::cli {

std::string retention_note(const std::string& trace) {
  const retention::SnapshotSet set = retention::load_snapshots(trace);
  if (set.snapshots.empty()) return {};
  constexpr size_t kListed = 5;
  std::string out = "\nHeap snapshots: " + std::to_string(set.snapshots.size()) + " (";
  for (size_t i = 0; i < set.snapshots.size() && i < kListed; ++i) {
    const retention::HeapSnapshot& s = set.snapshots[i];
    out += (i ? "; \"" : "\"") + s.label + "\" at " + report::human_duration(s.time_ns) +
           (s.at_exit ? ", at exit" : "");
  }
  if (set.snapshots.size() > kListed) out += "; …";
  return out + ") — see `memloupe retention " + trace + "`\n";
}

}  // namespace memloupe::cli
