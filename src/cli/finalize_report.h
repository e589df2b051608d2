// Finalising traces from the command line (`memloupe run`, `memloupe
// symbolize`), with what happened said on stderr:
//   memloupe: warning: cannot symbolise LIB: REASON      (once per module file)
//   memloupe: warning: INPUT: DAMAGE; kept the N events before it
//   memloupe: types: N of M allocation sites typed (P% of bytes), S s   (src/types/)
//   memloupe: analysis index: N bytes                     (src/analysis/index.h)
//   memloupe: wrote OUTPUT (N events, M bytes)
#pragma once

#include <string>

#include "symbolize/finalize.h"

namespace memloupe::cli {

// Returns kOk, kDamaged (written, but the input was cut short or damaged) or
// kFailed (nothing written; the input is unchanged). `with_index`: also build
// the analysis index on the finaliser's reads and append it. `with_types`: also
// infer the allocation sites' types and append the types table (src/types/).
int finalize_and_report(const std::string& input, const std::string& output,
                        symbolize::FinalizeOptions options, bool with_index = true, bool with_types = true);

// For a trace left as the recorder wrote it: counts its events and prints the
// "wrote" line (and its damage, if any). Returns kOk or kDamaged.
int report_unfinalized(const std::string& path);

}  // namespace memloupe::cli
