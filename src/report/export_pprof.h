// pprof export: the Profile as a gzipped profile.proto with Go's heap profile
// conventions, so `go tool pprof`, Perfetto UI and speedscope open it.
//
//   sample_type  alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes
//                (alloc first: pprof shows the last, inuse_space, by default)
//   period_type  space/bytes, period = mean bytes per sample (1 for an --all trace)
//   sample       one per site; location_id leaf first; values are estimates already
//                scaled for sampling (as Go's runtime writes them); "in use" means live
//                at the end of the time selection.
//   location     one per return address, with a Line per inlined frame (innermost first)
//   function     one per distinct (name, file)
//   mapping      one per module, with its build-id
#pragma once

#include <cstdint>
#include <vector>

#include "format/expected.h"
#include "report/profile.h"

namespace memloupe::report {

// The uncompressed profile.proto bytes.
std::vector<uint8_t> pprof_proto(const Profile& profile);
// pprof_proto, gzipped: what goes into the .pb.gz file.
Expected<std::vector<uint8_t>> pprof_gzipped(const Profile& profile);

}  // namespace memloupe::report
