// A small hand-built Profile whose right answers are worked out by hand in the
// comments of test_profile.cc; the export and HTML tests check against those.
#pragma once

#include "report/profile.h"

namespace memloupe::report::testing {

Profile small_profile();
// A profile far larger than any report page should carry (for the size bound).
Profile huge_profile();

}  // namespace memloupe::report::testing
