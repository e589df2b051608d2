// The one owner of a file descriptor, for the recorder (inside malloc: no heap,
// no exceptions, closes with a raw system call that leaves errno alone) and for
// the readers alike.
#pragma once

#include <sys/syscall.h>

#include <utility>

#include "format/sys_call.h"

namespace memloupe::format {

// An owned file descriptor (-1 = none).
class UniqueFd {
 public:
  UniqueFd() noexcept = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    reset(std::exchange(o.fd_, -1));
    return *this;
  }
  ~UniqueFd() { reset(); }
  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  void reset(int fd = -1) noexcept {
    if (fd_ >= 0) sys_call(SYS_close, fd_);
    fd_ = fd;
  }
  // Gives up ownership without closing (a fork child that must not touch the fd's
  // file position is fine with close, but a vfork child must not even do that).
  int release() noexcept { return std::exchange(fd_, -1); }

 private:
  int fd_ = -1;
};

}  // namespace memloupe::format
