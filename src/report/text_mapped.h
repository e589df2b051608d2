// Mapped memory in the terminal views (analysis::MappedMemory): the lines
// `summary` and `timeline` add when a trace has mapping blocks.
#pragma once

#include <optional>
#include <string>

#include "analysis/model.h"

namespace memloupe::report {

// "Mapped ..." and "Heap+mapped ..." lines; empty when the trace has none.
std::string mapped_lines(const analysis::Overview& o);

// The series' value (live at the end of its bucket) at time `t`: the series
// and the heap's have buckets of their own widths.
double series_at(const analysis::Timeline& series, uint64_t t);

}  // namespace memloupe::report
