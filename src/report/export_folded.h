// Folded ("collapsed") stacks: one line per distinct stack, `root;...;leaf VALUE`,
// as read by flamegraph.pl, inferno, speedscope and Perfetto.
//
// Stacks that name the same functions (e.g. two return addresses in one function)
// are merged into one line; lines are sorted; zero values are left out. There is
// no escape syntax in this format, so a ';' inside a function name (rare in C++,
// e.g. in some operator names) is replaced by ':' and a newline by a space.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

#include "report/profile.h"

namespace memloupe::report {

enum class FoldedMetric { Allocated, Live, Peak, Leaked, Count };

// Parses "allocated|live|peak|leaked|count"; false if unknown.
bool parse_folded_metric(std::string_view text, FoldedMetric& out);

void write_folded(const Profile& profile, FoldedMetric metric, std::ostream& out);

}  // namespace memloupe::report
