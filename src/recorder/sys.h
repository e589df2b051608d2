// The recorder's view of the operating system: owned handles, clocks, futexes and
// a logger, all without the heap (everything here may run inside malloc).
//
// System calls here are raw (sys_call below), never through libc's wrappers, so
// that they touch no thread-local state: they leave the program's errno alone,
// and they work on the flush thread, which glibc does not know about and which
// has no thread-local storage of its own (flush_thread.cc). The one exception is
// the clocks, read through the vDSO: glibc's clock_gettime touches errno only on
// failure, which cannot happen for these clocks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>

#include "format/sys_call.h"
#include "format/unique_fd.h"

namespace memloupe::recorder {

// The raw system call and the fd owner are format/'s, shared with the readers.
using format::sys_call;
using format::UniqueFd;

// An owned anonymous private mapping, zero-filled.
class Mapping {
 public:
  Mapping() noexcept = default;
  static Mapping anonymous(size_t bytes) noexcept;  // empty on failure
  Mapping(Mapping&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  Mapping& operator=(Mapping&& o) noexcept;
  ~Mapping() { reset(); }
  void* data() const noexcept { return data_; }
  size_t size() const noexcept { return size_; }
  explicit operator bool() const noexcept { return data_ != nullptr; }
  void reset() noexcept;
  // Forgets the mapping without unmapping it: its memory now has another owner
  // (e.g. a slab linked into a lock-free list that readers may be walking).
  void abandon() noexcept { data_ = nullptr, size_ = 0; }

 private:
  Mapping(void* d, size_t s) noexcept : data_(d), size_(s) {}
  void* data_ = nullptr;
  size_t size_ = 0;
};

uint64_t monotonic_ns() noexcept;
uint64_t realtime_ns() noexcept;
uint32_t current_tid() noexcept;

// Waits while *word == expected, at most `timeout_ns` (0 = no limit).
void futex_wait(const uint32_t* word, uint32_t expected, uint64_t timeout_ns = 0) noexcept;
void futex_wake(const uint32_t* word, int waiters) noexcept;

// Writes all of [data, data+n) to fd, retrying on EINTR and short writes.
// Returns 0 or the errno of the failure.
int write_all(int fd, const void* data, size_t n) noexcept;

// open(2) (returns the fd or -errno).
int open_file(const char* path, int flags, int mode = 0) noexcept;

// Reads up to cap bytes of a (small, /proc) file; returns the count, 0 on failure.
size_t read_file(const char* path, char* buf, size_t cap) noexcept;

// A thread's name (/proc/self/task/TID/comm, at most 15 bytes); its length.
size_t read_thread_name(uint32_t tid, char* out, size_t cap) noexcept;

// Resident set size from /proc/self/statm, in bytes (0 if unreadable).
uint64_t resident_bytes() noexcept;

// Writes v in decimal plus a NUL into out (at least 21 bytes); returns the length.
size_t format_u64(char* out, uint64_t v) noexcept;

// A line for stderr, built in a stack buffer: "memloupe: " + parts + "\n".
class LogLine {
 public:
  LogLine() noexcept;
  LogLine& operator<<(std::string_view s) noexcept;
  LogLine& operator<<(uint64_t v) noexcept;
  LogLine& errno_text(int err) noexcept;  // "No such file or directory" (never allocates)
  void emit() noexcept;                   // one write(2) to fd 2

 private:
  char buf_[512];
  size_t len_ = 0;
};

}  // namespace memloupe::recorder
