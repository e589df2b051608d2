// Comparing two traces site by site.
//
// Sites are matched by the keys of their frames (function names when the traces
// have symbols; "module+offset" otherwise, which is the same in every run of the
// same binaries), innermost `depth` frames (0 = the whole stack).
#pragma once

#include <string>
#include <vector>

#include "analysis/model.h"

namespace memloupe::analysis {

struct DiffRow {
  std::vector<std::string> frames;  // function names (display), innermost first
  size_t own = 0;                   // first_own_frame(): where the views start it
  Metrics a;                        // empty if the site is only in B
  Metrics b;
};

std::vector<DiffRow> diff_sites(const Model& a, const Model& b, uint32_t depth);

// B − A with an approximate 95% interval: each side's interval is turned into a
// standard error (half-width / 1.96, taking the wider side) and the two combine
// in quadrature. Exact when both traces are exact.
Estimate difference(const Estimate& a, const Estimate& b);

}  // namespace memloupe::analysis
