#include "recorder/unwind/proc_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "format/unique_fd.h"

namespace memloupe::recorder::unwind_detail {
namespace {

// A line's interesting part (addresses, permissions, offset, device, inode and the
// start of the path) is far shorter than this; longer lines are cut.
constexpr size_t kBuffer = 512;

class LineParser {
 public:
  LineParser(const char* p, const char* end) : p_(p), end_(end) {}

  bool hex(uintptr_t& v) {
    const char* start = p_;
    v = 0;
    for (; p_ < end_; ++p_) {
      const char c = *p_;
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) break;
      v = v << 4 | static_cast<uintptr_t>(d);
    }
    return p_ != start;
  }
  bool dec(uint64_t& v) {
    const char* start = p_;
    v = 0;
    for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_) v = v * 10 + static_cast<uint64_t>(*p_ - '0');
    return p_ != start;
  }
  bool expect(char c) {
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  void skip_field() {
    while (p_ < end_ && *p_ != ' ') ++p_;
  }
  void skip_spaces() {
    while (p_ < end_ && *p_ == ' ') ++p_;
  }
  bool take(size_t n, const char*& out) {
    if (static_cast<size_t>(end_ - p_) < n) return false;
    out = p_;
    p_ += n;
    return true;
  }
  const char* pos() const { return p_; }
  const char* end() const { return end_; }

 private:
  const char* p_;
  const char* end_;
};

bool is_stack_name(const char* name, size_t len) {
  constexpr char kStack[] = "[stack]";
  return len == 0 || (len == sizeof kStack - 1 && std::memcmp(name, kStack, len) == 0);
}

}  // namespace

bool parse_maps_line(const char* line, size_t len, Mapping& out) noexcept {
  LineParser p(line, line + len);
  const char* perms = nullptr;
  uintptr_t offset = 0, dev = 0;
  uint64_t inode = 0;
  if (!p.hex(out.begin) || !p.expect('-') || !p.hex(out.end) || !p.expect(' ') ||
      !p.take(4, perms) || !p.expect(' ') || !p.hex(offset) || !p.expect(' ') ||
      !p.hex(dev) || !p.expect(':') || !p.hex(dev) || !p.expect(' ') || !p.dec(inode)) {
    return false;
  }
  p.skip_spaces();
  out.readable = perms[0] == 'r';
  out.writable = perms[1] == 'w';
  const char* name = p.pos();
  out.stack_like = inode == 0 && is_stack_name(name, static_cast<size_t>(p.end() - name));
  return out.begin < out.end;
}

bool find_mapping(uintptr_t addr, Mapping& out) noexcept {
  int raw;
  do {
    raw = ::open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  } while (raw < 0 && errno == EINTR);
  const format::UniqueFd fd(raw);
  if (fd.get() < 0) return false;
  char buf[kBuffer];
  size_t have = 0;
  bool skipping = false;  // inside the cut-off tail of an over-long line
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf + have, kBuffer - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    have += static_cast<size_t>(n);
    size_t start = 0;
    for (;;) {
      const void* nl = std::memchr(buf + start, '\n', have - start);
      const size_t line_end = nl != nullptr ? static_cast<size_t>(static_cast<const char*>(nl) - buf)
                                            : have;
      if (nl == nullptr && !(start == 0 && have == kBuffer)) break;  // wait for more bytes
      if (!skipping) {
        Mapping m;
        // The file is sorted by address: past `addr` it can no longer appear.
        if (parse_maps_line(buf + start, line_end - start, m)) {
          if (addr < m.begin) return false;
          if (addr < m.end) {
            out = m;
            return true;
          }
        }
      }
      skipping = nl == nullptr;
      start = nl != nullptr ? line_end + 1 : have;
      if (start >= have) break;
    }
    std::memmove(buf, buf + start, have - start);
    have -= start;
  }
}

}  // namespace memloupe::recorder::unwind_detail
