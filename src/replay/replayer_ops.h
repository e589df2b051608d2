// The replayer's view of the op file (op_file.h): the header and thread table,
// checked, and the ops read in blocks into the replayer's own mmap'd buffers.
//
// The ops are read with pread, not mapped: a mapped file's pages would count
// in the replayer's resident set, and with 16 bytes per call they would be a
// large share of it on a big trace. Each thread reads through a 64 KiB window.
#pragma once

#include <cstddef>
#include <cstdint>

#include "replay/op_file.h"

namespace memloupe::replay {

struct OpSource {
  int fd = -1;
  OpFileHeader header{};
  OpThread* threads = nullptr;  // header.threads entries, in mmap'd memory
  uint64_t ops_offset = 0;      // file offset of op 0
};

// Opens and checks `path`: header, thread table, and every op (kinds,
// functions, slots, wait targets that exist). On failure writes
// one line naming the problem to stderr and returns false.
bool open_ops(const char* path, OpSource& out);

// Reads ops [first, first + n) of the whole op array into `buf`.
bool read_ops(const OpSource& src, uint64_t first, size_t n, Op* buf);

inline constexpr size_t kOpWindow = 4096;  // ops per read (64 KiB)

// Anonymous memory that the allocator under test never sees.
void* map_private(size_t bytes);

}  // namespace memloupe::replay
