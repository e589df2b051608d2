// A small hand-built Profile whose right answers are worked out by hand in the
// comments of test_profile.cc; the export and HTML tests check against those.
#pragma once

#include "report/profile.h"

namespace memloupe::report::testing {

Profile small_profile();
// A profile far larger than any report page should carry (for the size bound).
Profile huge_profile();
// More sites than the page gives rows (max_site_rows = 50,000): 60,000 sites of
// 12 frames, each busy in one bucket; the same function chain never twice.
Profile many_sites_profile();

}  // namespace memloupe::report::testing
