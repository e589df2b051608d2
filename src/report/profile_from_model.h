// Fills the exports' and the HTML report's Profile from the analysis model.
//
// Sites are the model's distinct backtraces (so pprof keeps every return
// address); their frames come from analysis::expand_address, the one naming
// rule of every view; frames whose function matches --hide are dropped. Values
// are the model's point estimates (Estimator::bytes_value / objects_value):
//   allocated = Metric::Allocated, live = Metric::Live (the query's live window:
//   --at T, --at-end, by default the peak), peak = Metric::Peak, leaked = Metric::Leaked.
// Time buckets are the model's per-stack series (ask for them with
// QueryArgs::series_buckets). With the trace's types table, each site carries
// its C++ type (analysis::stack_type).
#pragma once

#include "analysis/model.h"
#include "report/profile.h"
#include "types/type_table.h"

namespace memloupe::report {

Profile profile_from_model(const analysis::Model& model, const types::TypeTable* types = nullptr);

}  // namespace memloupe::report
