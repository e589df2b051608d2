// The header chunk's payload (layout in format/header.cc) -> TraceInfo.
#pragma once

#include <optional>

#include "format/events.h"
#include "format/expected.h"
#include "reader/cursor.h"

namespace memloupe::reader {

// Fills everything but `source_format`; `version` is the prologue's (the
// fields a version has differ: 2 adds the time unit).
std::optional<Error> parse_header(Cursor c, uint32_t version, format::TraceInfo& info);

}  // namespace memloupe::reader
