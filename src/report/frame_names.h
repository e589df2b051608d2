// How a frame is named in every report: one rule for pprof, folded stacks,
// massif and the HTML flame graph.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "report/profile.h"

namespace memloupe::report {

// The function's name. A Location filled from the model always has frames, named
// by analysis::expand_address (its rule for unknown addresses included); only a
// Location with no frames at all falls back to "[module+0xOFFSET]" (or
// "[0xADDRESS]" when the module is unknown too).
std::string frame_name(const Profile& profile, const Location& location, const SourceFrame* frame);

// A demangled C++ name made short enough for a label: template arguments become
// "<…>" and parameter lists "()"; operators ("operator<<", "operator()"),
// "(anonymous namespace)" and the rest stay. The one rule for the terminal views
// and the HTML report (which gets both names in its data).
//   "std::vector<int, std::allocator<int> >::push_back(int const&)"
//     -> "std::vector<…>::push_back()"
// A name cut short inside a list gets its closing ")" back.
std::string short_function_name(std::string_view name);

// A site's frames as names, outermost (root) first, inlined frames expanded.
std::vector<std::string> stack_names_root_first(const Profile& profile, const Site& site);

}  // namespace memloupe::report
