// How many CPUs this process may use, for the analysis' choices of threads.
#pragma once

namespace memloupe::analysis {

// The CPUs this process may run on (its affinity mask, which `taskset` and
// container limits set; hardware_concurrency() counts the machine's).
unsigned usable_cpus();

}  // namespace memloupe::analysis
