#include "recorder/trace_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace memloupe::recorder {
namespace {

// Descriptors at or above this: away from the ones programs pick or iterate over.
constexpr int kHighFd = 1000;

bool identify(int fd, uint64_t& device, uint64_t& inode) noexcept {
  struct stat st{};
  if (sys_call(SYS_fstat, fd, reinterpret_cast<long>(&st)) != 0) return false;
  device = st.st_dev;
  inode = st.st_ino;
  return true;
}

// "path" or "path.N" into out; false if it does not fit.
bool numbered(const char* path, unsigned n, char* out, size_t cap) noexcept {
  const size_t len = std::strlen(path);
  if (len + 4 >= cap) return false;
  std::memcpy(out, path, len);
  size_t at = len;
  if (n > 0) {
    out[at++] = '.';
    if (n >= 10) out[at++] = static_cast<char>('0' + n / 10);
    out[at++] = static_cast<char>('0' + n % 10);
  }
  out[at] = '\0';
  return true;
}

}  // namespace

bool TraceOutput::open(const char* path, bool never_overwrite, FailureHandler on_failure) noexcept {
  on_failure_ = on_failure;
  failed_.store(false, std::memory_order_relaxed);
  numbered(path, 0, path_, sizeof(path_));
  int err = ENAMETOOLONG;
  constexpr int kFlags = O_WRONLY | O_CREAT | O_CLOEXEC;
  for (unsigned n = 0; n < (never_overwrite ? 100 : 1); ++n) {
    if (!numbered(path, n, path_, sizeof(path_))) break;
    const int fd = open_file(path_, kFlags | (never_overwrite ? O_EXCL : O_TRUNC), 0644);
    if (fd >= 0) {
      fd_.reset(fd);
      break;
    }
    err = -fd;
    if (err != EEXIST) break;
  }
  if (!fd_) {
    fail(err);
    return false;
  }
  const long high = sys_call(SYS_fcntl, fd_.get(), F_DUPFD_CLOEXEC, kHighFd);
  if (high >= 0) fd_.reset(static_cast<int>(high));
  identify(fd_.get(), device_, inode_);
  if (!ring_.init(kRingBytes)) {
    fail(ENOMEM);
    return false;
  }
  return true;
}

void TraceOutput::write_chunk(std::span<const uint8_t> chunk) noexcept {
  if (failed()) return;
  if (ring_.push(chunk)) return;
  // The flush thread has fallen behind by a whole ring: write from here.
  LockGuard io(io_lock_);
  drain_locked();
  if (!ring_.push(chunk) && !failed()) {
    if (!still_our_file()) return fail(EBADF);
    if (const int err = write_all(fd_.get(), chunk.data(), chunk.size())) fail(err);
  }
}

void TraceOutput::drain() noexcept {
  LockGuard io(io_lock_);
  drain_locked();
}

bool TraceOutput::still_our_file() const noexcept {
  uint64_t device, inode;
  return identify(fd_.get(), device, inode) && device == device_ && inode == inode_;
}

void TraceOutput::drain_locked() noexcept {
  if (ring_.queued() != 0 && fd_ && !failed() && !still_our_file()) fail(EBADF);
  for (;;) {
    const ByteRing::Pieces p = ring_.peek();
    const size_t total = p.first.size() + p.second.size();
    if (total == 0) return;
    if (failed() || !fd_) {
      ring_.consume(total);  // dropped: the failure has been reported
      continue;
    }
    iovec iov[2] = {{const_cast<uint8_t*>(p.first.data()), p.first.size()},
                    {const_cast<uint8_t*>(p.second.data()), p.second.size()}};
    const long w = sys_call(SYS_writev, fd_.get(), reinterpret_cast<long>(iov), p.second.empty() ? 1 : 2);
    if (w == -EINTR) continue;
    if (w <= 0) {
      fail(w < 0 ? static_cast<int>(-w) : EIO);
      continue;
    }
    ring_.consume(static_cast<size_t>(w));
  }
}

void TraceOutput::close() noexcept {
  LockGuard io(io_lock_);
  drain_locked();
  fd_.reset();
}

void TraceOutput::abandon_in_child() noexcept {
  io_lock_.reset();
  fd_.reset();
  ring_.reset();
}

void TraceOutput::fail(int err) noexcept {
  if (failed_.exchange(true, std::memory_order_relaxed)) return;
  LogLine line;
  line << "cannot write trace '" << path_ << "': ";
  line.errno_text(err) << "; recording disabled";
  line.emit();
  if (on_failure_) on_failure_();
}

}  // namespace memloupe::recorder
