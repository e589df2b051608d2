// The header chunk's payload (layout in format/header.cc) -> TraceInfo.
#pragma once

#include <optional>

#include "format/events.h"
#include "format/expected.h"
#include "reader/cursor.h"

namespace memloupe::reader {

// Fills everything but `version` and `source_format`.
std::optional<Error> parse_header(Cursor c, format::TraceInfo& info);

}  // namespace memloupe::reader
