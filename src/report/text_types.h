// `memloupe types`: objects per C++ type (analysis/type_counts.h) as a text
// table, CSV or JSON, and for `--type NAME` the stacks that created it.
#pragma once

#include <cstdint>
#include <string>

#include "analysis/model.h"
#include "analysis/type_counts.h"
#include "format/expected.h"
#include "types/type_table.h"

namespace memloupe::report {

struct TypesOptions {
  analysis::TypeOrder order = analysis::TypeOrder::Count;
  std::string type;        // --type: exact name, else an ECMAScript regex searched in names; "" = none
  uint32_t depth = 0;      // frames per stack (0: whole)
  double min_count = 0;    // stacks with fewer objects are dropped
  size_t limit = 30;       // types in the table; 0 = all
  size_t frames = 8;       // frame lines per stack in the text output; 0 = all
  bool json = false;
  bool csv = false;
  size_t width = 0;
  bool full_names = false;
};

// Errors: a --type that is neither a name nor a valid regex.
Expected<std::string> render_types(const analysis::Model& model, const types::LoadedTypes& types,
                                   const TypesOptions& options);

}  // namespace memloupe::report
