#include "replay/replayer_ops.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "format/funcs.h"

namespace memloupe::replay {
namespace {

// Messages go through a stack buffer and one write(2): no stdio buffers on the heap.
[[gnu::format(printf, 1, 2)]] bool fail(const char* fmt, ...) {
  char line[512];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(line, sizeof line, fmt, args);
  va_end(args);
  if (n > 0) (void)!::write(2, line, static_cast<size_t>(n) < sizeof line ? static_cast<size_t>(n) : sizeof line - 1);
  return false;
}

bool pread_all(int fd, void* buf, size_t n, uint64_t offset) {
  auto* p = static_cast<char*>(buf);
  while (n != 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

bool check_op(const OpSource& src, uint32_t thread, uint64_t index, const Op& op) {
  const OpFileHeader& h = src.header;
  switch (op.kind) {
    case OpKind::Alloc:
    case OpKind::Free:
    case OpKind::Realloc:
      if (!format::func_valid(op.func))
        return fail("memloupe-replayer: thread %u op %llu: function %u unknown\n", thread,
                    static_cast<unsigned long long>(index), op.func);
      if (op.slot >= h.slots)
        return fail("memloupe-replayer: thread %u op %llu: slot %u outside %llu\n", thread,
                    static_cast<unsigned long long>(index), op.slot, static_cast<unsigned long long>(h.slots));
      if (op.align_log2 >= 48)
        return fail("memloupe-replayer: thread %u op %llu: alignment 2^%u\n", thread,
                    static_cast<unsigned long long>(index), op.align_log2);
      return true;
    case OpKind::Probe:
      if (op.slot >= h.probes)
        return fail("memloupe-replayer: thread %u op %llu: probe %u outside %llu\n", thread,
                    static_cast<unsigned long long>(index), op.slot, static_cast<unsigned long long>(h.probes));
      return true;
    // A wait for an op that does not publish still ends: every thread publishes
    // its full count when its stream ends (replayer_main.cc).
    case OpKind::Wait:
      if (op.slot >= h.threads || op.slot == thread || op.size == 0 || op.size > src.threads[op.slot].ops)
        return fail("memloupe-replayer: thread %u op %llu: waits for op %llu of thread %u, which does not exist\n",
                    thread, static_cast<unsigned long long>(index), static_cast<unsigned long long>(op.size),
                    op.slot);
      return true;
  }
  return fail("memloupe-replayer: thread %u op %llu: kind %u unknown\n", thread,
              static_cast<unsigned long long>(index), static_cast<unsigned>(op.kind));
}

}  // namespace

void* map_private(size_t bytes) {
  if (bytes == 0) bytes = 1;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

bool read_ops(const OpSource& src, uint64_t first, size_t n, Op* buf) {
  return pread_all(src.fd, buf, n * sizeof(Op), src.ops_offset + first * sizeof(Op));
}

bool open_ops(const char* path, OpSource& out) {
  out.fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (out.fd < 0) return fail("memloupe-replayer: cannot open %s: %s\n", path, std::strerror(errno));
  OpFileHeader& h = out.header;
  if (!pread_all(out.fd, &h, sizeof h, 0) || std::memcmp(h.magic, kOpFileMagic, sizeof h.magic) != 0 ||
      h.version != kOpFileVersion)
    return fail("memloupe-replayer: %s is not an op file of version %u\n", path, kOpFileVersion);
  if (h.probes > kMaxProbes) return fail("memloupe-replayer: %s: too many probes\n", path);
  if (h.threads == 0 || h.threads > kMaxThreads)
    return fail("memloupe-replayer: %s: %u threads (1 to %u expected)\n", path, h.threads, kMaxThreads);
  const off_t file_size = ::lseek(out.fd, 0, SEEK_END);
  out.ops_offset = sizeof h + uint64_t{h.threads} * sizeof(OpThread);
  if (file_size < 0 || h.total_ops > (static_cast<uint64_t>(file_size) - out.ops_offset) / sizeof(Op) ||
      out.ops_offset + h.total_ops * sizeof(Op) != static_cast<uint64_t>(file_size))
    return fail("memloupe-replayer: %s: its size does not match its %llu ops\n", path,
                static_cast<unsigned long long>(h.total_ops));
  out.threads = static_cast<OpThread*>(map_private(h.threads * sizeof(OpThread)));
  if (out.threads == nullptr || !pread_all(out.fd, out.threads, h.threads * sizeof(OpThread), sizeof h))
    return fail("memloupe-replayer: %s: cannot read its thread table\n", path);
  uint64_t expected_first = 0;
  for (uint32_t t = 0; t < h.threads; ++t) {
    const OpThread& th = out.threads[t];
    if (th.first_op != expected_first || th.ops > kMaxOpsPerThread || th.ops > h.total_ops - expected_first)
      return fail("memloupe-replayer: %s: thread %u's ops are out of place\n", path, t);
    expected_first += th.ops;
  }
  if (expected_first != h.total_ops) return fail("memloupe-replayer: %s: the threads do not hold every op\n", path);

  // Every op, once, before anything runs: the replay itself trusts them.
  auto* window = static_cast<Op*>(map_private(kOpWindow * sizeof(Op)));
  if (window == nullptr) return fail("memloupe-replayer: out of memory\n");
  for (uint32_t t = 0; t < h.threads; ++t) {
    const OpThread& th = out.threads[t];
    for (uint64_t i = 0; i < th.ops; i += kOpWindow) {
      const size_t n = th.ops - i < kOpWindow ? th.ops - i : kOpWindow;
      if (!read_ops(out, th.first_op + i, n, window)) return fail("memloupe-replayer: %s: read failed\n", path);
      for (size_t j = 0; j < n; ++j)
        if (!check_op(out, t, i + j, window[j])) return false;
    }
  }
  munmap(window, kOpWindow * sizeof(Op));
  return true;
}

}  // namespace memloupe::replay
