// Writing a whole buffer to a file descriptor, for the tools' side (finalise,
// the symbolizer's disk cache, replay's prepared ops). write(2) may write less
// than asked or be interrupted; this loops until all is written. The recorder
// has its own (recorder/sys.h): it must not touch the program's errno.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace memloupe::format {

// True once all `size` bytes are written; false on an error, errno telling
// which (a write of 0 bytes counts as one: ENOSPC's usual form).
inline bool write_all(int fd, const void* data, size_t size) noexcept {
  for (auto* p = static_cast<const char*>(data); size > 0;) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = ENOSPC;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace memloupe::format
