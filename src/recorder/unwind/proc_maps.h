// Looking up one address in /proc/self/maps from inside malloc: plain open/read/close
// into a stack buffer (no stdio, no allocation), so it is safe in a malloc hook and
// in a signal handler.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::recorder::unwind_detail {

struct Mapping {
  uintptr_t begin = 0, end = 0;
  bool readable = false, writable = false;
  // Anonymous memory that can hold a thread stack: no file (inode 0) and either no
  // name or "[stack]". Excludes [vvar] and friends, whose pages may not be readable.
  bool stack_like = false;
};

// Parses one line of /proc/PID/maps (without its newline; `len` may cut the line
// short inside the path, which is fine). Returns false if the line is malformed.
bool parse_maps_line(const char* line, size_t len, Mapping& out) noexcept;

// Finds the mapping that contains `addr` in /proc/self/maps.
bool find_mapping(uintptr_t addr, Mapping& out) noexcept;

}  // namespace memloupe::recorder::unwind_detail
