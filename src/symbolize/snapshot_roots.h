// The finaliser's part in naming heap-snapshot roots (docs/RETENTION.md): the
// stack frames' pcs go into the symbols section with the backtraces' return
// addresses, and each snapshot gets a Names part naming the global variables
// its roots hold pointers in (format/snapshot_wire.h), so the finalised trace
// names its roots without the binaries.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "symbolize/module_map.h"
#include "symbolize/symbolizer.h"

namespace memloupe::symbolize {

struct SnapshotRootNames {
  std::vector<uint64_t> frame_pcs;                // distinct, to symbolise
  std::vector<std::vector<uint8_t>> names_chunks;  // payloads of Snapshot chunks to append
};

// From the snapshots of `trace` (none: nothing to do); damaged ones are skipped
// (the loader reports them).
SnapshotRootNames name_snapshot_roots(std::span<const uint8_t> trace, const ModuleMap& modules,
                                      const SymbolizerOptions& options);

}  // namespace memloupe::symbolize
