// How a frame is named in every report: one rule for pprof, folded stacks,
// massif and the HTML flame graph.
#pragma once

#include <string>
#include <vector>

#include "report/profile.h"

namespace memloupe::report {

// The function's name. A Location filled from the model always has frames, named
// by analysis::expand_address (its rule for unknown addresses included); only a
// Location with no frames at all falls back to "[module+0xOFFSET]" (or
// "[0xADDRESS]" when the module is unknown too).
std::string frame_name(const Profile& profile, const Location& location, const SourceFrame* frame);

// A site's frames as names, outermost (root) first, inlined frames expanded.
std::vector<std::string> stack_names_root_first(const Profile& profile, const Site& site);

}  // namespace memloupe::report
