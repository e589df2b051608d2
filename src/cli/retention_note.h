// The line `summary` prints about the heap snapshots a trace holds, pointing
// to `memloupe retention`.
#pragma once

#include <string>

namespace memloupe::cli {

// "Heap snapshots: 2 ("exit" at 1.500 s, at exit; "loaded" at 200 ms) — see
// `memloupe retention TRACE`\n"; empty when the trace holds none.
std::string retention_note(const std::string& trace);

}  // namespace memloupe::cli
