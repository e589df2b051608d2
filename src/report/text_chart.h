// The heap over time as a terminal chart: the estimated live heap as bars of
// block elements (eighths of a cell), RSS as dots, the peak marked with ▲ and
// markers numbered under the time axis.
//
//  12.3 MiB ┤        ▁▆█▇▅
//           ┤   •••▃▇█████▆▄•••
//         0 ┼──────────────────
//                     ▲ peak 12.3 MiB at 1.23 s
//                1        2
//           0 s                 2.50 s
#pragma once

#include <cstddef>
#include <string>

#include "analysis/model.h"

namespace memloupe::report {

struct ChartSize {
  size_t width = 72;   // columns of plot (not counting the axis labels)
  size_t height = 12;  // rows of plot
};

// The live heap estimate of each of `columns` equal slices of [0, duration]:
// the highest value in the slice (so a peak is never averaged away).
std::vector<double> heap_columns(const analysis::Overview& overview, size_t columns);
// The RSS of each slice: the highest sample in it, else the last one before it;
// absent before the first sample.
std::vector<std::optional<double>> rss_columns(const analysis::Overview& overview, size_t columns);

std::string render_timeline_chart(const analysis::Overview& overview, ChartSize size);

}  // namespace memloupe::report
