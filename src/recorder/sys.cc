#include "recorder/sys.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace memloupe::recorder {

int open_file(const char* path, int flags, int mode) noexcept {
  return static_cast<int>(sys_call(SYS_openat, AT_FDCWD, reinterpret_cast<long>(path), flags, mode));
}

Mapping Mapping::anonymous(size_t bytes) noexcept {
  const long p = sys_call(SYS_mmap, 0, static_cast<long>(bytes), PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p < 0 && p > -4096) return {};  // -errno
  return {reinterpret_cast<void*>(p), bytes};
}

Mapping& Mapping::operator=(Mapping&& o) noexcept {
  reset();
  data_ = std::exchange(o.data_, nullptr);
  size_ = std::exchange(o.size_, 0);
  return *this;
}

void Mapping::reset() noexcept {
  if (data_) sys_call(SYS_munmap, reinterpret_cast<long>(data_), static_cast<long>(size_));
  data_ = nullptr;
  size_ = 0;
}

namespace {
uint64_t clock_ns(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}
}  // namespace

uint64_t monotonic_ns() noexcept { return clock_ns(CLOCK_MONOTONIC); }
uint64_t realtime_ns() noexcept { return clock_ns(CLOCK_REALTIME); }
uint32_t current_tid() noexcept { return static_cast<uint32_t>(sys_call(SYS_gettid)); }

void futex_wait(const uint32_t* word, uint32_t expected, uint64_t timeout_ns) noexcept {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout_ns / 1'000'000'000u);
  ts.tv_nsec = static_cast<long>(timeout_ns % 1'000'000'000u);
  sys_call(SYS_futex, reinterpret_cast<long>(word), FUTEX_WAIT_PRIVATE, expected,
           timeout_ns ? reinterpret_cast<long>(&ts) : 0);
}

void futex_wake(const uint32_t* word, int waiters) noexcept {
  sys_call(SYS_futex, reinterpret_cast<long>(word), FUTEX_WAKE_PRIVATE, waiters);
}

int write_all(int fd, const void* data, size_t n) noexcept {
  auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const long w = sys_call(SYS_write, fd, reinterpret_cast<long>(p), static_cast<long>(n));
    if (w < 0) {
      if (w == -EINTR) continue;
      return static_cast<int>(-w);
    }
    if (w == 0) return EIO;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return 0;
}

size_t read_file(const char* path, char* buf, size_t cap) noexcept {
  UniqueFd fd(open_file(path, O_RDONLY | O_CLOEXEC));
  if (!fd) return 0;
  size_t len = 0;
  while (len < cap) {
    const long r = sys_call(SYS_read, fd.get(), reinterpret_cast<long>(buf + len), static_cast<long>(cap - len));
    if (r == -EINTR) continue;
    if (r <= 0) break;
    len += static_cast<size_t>(r);
  }
  return len;
}

size_t read_thread_name(uint32_t tid, char* out, size_t cap) noexcept {
  char path[48] = "/proc/self/task/";
  const size_t at = std::strlen(path);
  std::strcpy(path + at + format_u64(path + at, tid), "/comm");
  size_t len = read_file(path, out, cap);
  while (len > 0 && (out[len - 1] == '\n' || out[len - 1] == '\0')) --len;
  return len;
}

uint64_t resident_bytes() noexcept {
  // "size resident shared text lib data dt", in pages.
  char buf[128];
  const size_t n = read_file("/proc/self/statm", buf, sizeof(buf) - 1);
  size_t i = 0;
  while (i < n && buf[i] != ' ') ++i;
  uint64_t pages = 0;
  for (++i; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i) pages = pages * 10 + static_cast<uint64_t>(buf[i] - '0');
  return pages * getauxval(AT_PAGESZ);
}

size_t format_u64(char* out, uint64_t v) noexcept {
  char digits[20];
  size_t n = 0;
  do {
    digits[sizeof(digits) - 1 - n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  std::memcpy(out, digits + sizeof(digits) - n, n);
  out[n] = '\0';
  return n;
}

LogLine::LogLine() noexcept { *this << "memloupe: "; }

LogLine& LogLine::operator<<(std::string_view s) noexcept {
  const size_t room = sizeof(buf_) - 1 - len_;  // keep one byte for '\n'
  const size_t n = s.size() < room ? s.size() : room;
  std::memcpy(buf_ + len_, s.data(), n);
  len_ += n;
  return *this;
}

LogLine& LogLine::operator<<(uint64_t v) noexcept {
  char digits[21];
  return *this << std::string_view(digits, format_u64(digits, v));
}

LogLine& LogLine::errno_text(int err) noexcept {
  // strerror() may translate (and allocate); strerrordesc_np returns a constant.
  const char* text = strerrordesc_np(err);
  return text ? *this << text : *this << "error " << static_cast<uint64_t>(err);
}

void LogLine::emit() noexcept {
  buf_[len_++] = '\n';
  write_all(2, buf_, len_);
  len_ = 0;
}

}  // namespace memloupe::recorder
