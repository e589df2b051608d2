#include "analysis/usable_cpus.h"

#include <sched.h>

#include <algorithm>
#include <thread>

namespace memloupe::analysis {

unsigned usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

}  // namespace memloupe::analysis
