// The replayer's cheap clock for timing each allocator call: the time-stamp
// counter where there is one (a few ns a read), converted to seconds with the
// ratio of ticks to CLOCK_MONOTONIC over the whole run; clock_gettime elsewhere.
#pragma once

#include <time.h>

#include <cstdint>

namespace memloupe::replay {

inline uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_ia32_rdtsc();
#else
  return monotonic_ns();
#endif
}

}  // namespace memloupe::replay
