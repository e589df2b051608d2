#include "cli/retention_note.h"

#include "reader/bytes.h"
#include "reader/snapshot_decoder.h"
#include "report/text_format.h"

namespace memloupe::cli {

// Only the snapshots' headers are needed, so the Snapshot chunks are decoded
// straight from the mapped file, and `summary` stays as fast as without.
std::string retention_note(const std::string& trace) {
  auto bytes = reader::Bytes::map_file(trace);
  if (!bytes) return {};
  const reader::RawSnapshots set = reader::decode_snapshots((*bytes)->data());
  if (set.snapshots.empty()) return {};
  constexpr size_t kListed = 5;
  std::string out = "\nHeap snapshots: " + std::to_string(set.snapshots.size()) + " (";
  for (size_t i = 0; i < set.snapshots.size() && i < kListed; ++i) {
    const reader::RawSnapshot& s = set.snapshots[i];
    out += (i ? "; \"" : "\"") + s.label + "\" at " + report::human_duration(s.time_ns) +
           (s.at_exit ? ", at exit" : "");
  }
  if (set.snapshots.size() > kListed) out += "; …";
  return out + ") — see `memloupe retention " + trace + "`, or the Retention panel of `memloupe report`\n";
}

}  // namespace memloupe::cli
