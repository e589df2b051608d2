#include "recorder/trace_output.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "format/varint.h"

namespace memloupe::recorder {
namespace {

// Descriptors at or above this: away from the ones programs pick or iterate over.
constexpr int kHighFd = 1000;

// Each write_chunk() is one record in the ring, so drain() knows where chunks
// begin: the prologue and header go out as they are, the chunks the compressor
// wants are compressed (the writer decides, since it has them contiguous).
constexpr size_t kRecordHeader = 8;  // u32 length, u32 kind
enum : uint32_t { kStore = 0, kCompress = 1 };

// CPUs in the process's affinity mask (1 if it cannot be read).
size_t affinity_cpus() noexcept {
  uint64_t mask[16] = {};
  const long n = sys_call(SYS_sched_getaffinity, 0, sizeof(mask), reinterpret_cast<long>(mask));
  size_t cpus = 0;
  for (long i = 0; i < n / 8; ++i) cpus += static_cast<size_t>(__builtin_popcountll(mask[i]));
  return cpus != 0 ? cpus : 1;
}

// `n` bytes from `at` of the two pieces `p`, as up to two pieces.
ByteRing::Pieces slice(const ByteRing::Pieces& p, size_t at, size_t n) noexcept {
  auto part = [](std::span<const uint8_t> s, size_t from, size_t len) {
    from = from < s.size() ? from : s.size();
    return s.subspan(from, len < s.size() - from ? len : s.size() - from);
  };
  const std::span<const uint8_t> first = part(p.first, at, n);
  const size_t second_at = at > p.first.size() ? at - p.first.size() : 0;
  return {first, part(p.second, second_at, n - first.size())};
}

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

bool TraceOutput::open(const char* path, bool never_overwrite, FailureHandler on_failure,
                       int zstd_level, bool stream_events) noexcept {
  on_failure_ = on_failure;
  compressor_.set_level(zstd_level, stream_events);
  cpus_ = affinity_cpus();
  failed_.store(false, std::memory_order_relaxed);
  numbered(path, 0, path_, sizeof(path_));
  int err = ENAMETOOLONG;
  constexpr int kFlags = O_WRONLY | O_CREAT | O_CLOEXEC;
  for (unsigned n = 0; n < (never_overwrite ? 100 : 1); ++n) {
    if (!numbered(path, n, path_, sizeof(path_))) break;
    // Not O_TRUNC: the file is emptied only once it is ours (claim()).
    const int fd = open_file(path_, kFlags | (never_overwrite ? O_EXCL : 0), 0644);
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
  if (!claim()) return false;
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
  uint8_t head[kRecordHeader];
  format::put_u32(head, static_cast<uint32_t>(chunk.size()));
  format::put_u32(head + 4, ChunkCompressor::wants(chunk) ? kCompress : kStore);
  if (ring_.push(head, chunk)) return;
  // The flush thread has fallen behind by a whole ring: write from here.
  LockGuard io(io_lock_);
  drain_locked();
  if (!ring_.push(head, chunk) && !failed()) {
    if (!still_our_file()) return fail(EBADF);
    if (const int err = write_all(fd_.get(), chunk.data(), chunk.size())) fail(err);
  }
}

void TraceOutput::drain() noexcept {
  LockGuard io(io_lock_);
  drain_locked();
}

bool TraceOutput::claim() noexcept {
  const long locked = sys_call(SYS_flock, fd_.get(), LOCK_EX | LOCK_NB);
  if (locked == -EWOULDBLOCK) {
    failed_.store(true, std::memory_order_relaxed);  // reported here, and nothing was written
    (LogLine() << "trace '" << path_ << "' is being written by another traced process; this one runs untraced")
        .emit();
    fd_.reset();
    return false;
  }
  // Any other answer (a file system without locks) leaves the file as it was
  // before the lock. EINVAL: not a regular file (/dev/full, a pipe), which
  // O_TRUNC leaves as it is too.
  if (const long cut = sys_call(SYS_ftruncate, fd_.get(), 0); cut != 0 && cut != -EINVAL) {
    fail(static_cast<int>(-cut));
    return false;
  }
  return true;
}

bool TraceOutput::still_our_file() const noexcept {
  uint64_t device, inode;
  return identify(fd_.get(), device, inode) && device == device_ && inode == inode_;
}

void TraceOutput::drain_locked() noexcept {
  if (ring_.queued() != 0 && fd_ && !failed() && !still_our_file()) fail(EBADF);
  for (;;) {
    const ByteRing::Pieces p = ring_.peek();
    if (p.first.size() + p.second.size() < kRecordHeader) return;  // (records are pushed whole)
    uint8_t head[kRecordHeader];
    const ByteRing::Pieces h = slice(p, 0, kRecordHeader);
    std::memcpy(head, h.first.data(), h.first.size());
    if (!h.second.empty()) std::memcpy(head + h.first.size(), h.second.data(), h.second.size());
    const uint32_t length = format::get_u32(head);
    const ByteRing::Pieces body = slice(p, kRecordHeader, length);
    // Dropped once failed: the failure has been reported.
    if (!failed() && fd_) write_record(format::get_u32(head + 4) == kCompress, body.first, body.second);
    ring_.consume(kRecordHeader + length);
  }
}

void TraceOutput::write_record(bool compress, std::span<const uint8_t> a,
                               std::span<const uint8_t> b) noexcept {
  const std::span<const uint8_t> packed = compress ? compressor_.compress(a, b) : std::span<const uint8_t>();
  if (!packed.empty()) {
    if (const int err = write_all(fd_.get(), packed.data(), packed.size())) fail(err);
    return;
  }
  iovec iov[2] = {{const_cast<uint8_t*>(a.data()), a.size()}, {const_cast<uint8_t*>(b.data()), b.size()}};
  int pieces = b.empty() ? 1 : 2;
  iovec* at = iov;
  while (pieces > 0) {
    const long w = sys_call(SYS_writev, fd_.get(), reinterpret_cast<long>(at), pieces);
    if (w == -EINTR) continue;
    if (w <= 0) return fail(w < 0 ? static_cast<int>(-w) : EIO);
    // A short write: go on after the bytes written.
    size_t done = static_cast<size_t>(w);
    for (; pieces > 0 && done >= at->iov_len; --pieces, ++at) done -= at->iov_len;
    if (pieces > 0) {
      at->iov_base = static_cast<uint8_t*>(at->iov_base) + done;
      at->iov_len -= done;
    }
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
