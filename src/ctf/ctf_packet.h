// memtrace CTF packet headers (layout in ctf_wire.h): parsing with memtrace's
// checks, and writing (always version 3).
#pragma once

#include <cstdint>
#include <span>

#include "ctf/ctf_out.h"
#include "ctf/ctf_wire.h"
#include "format/expected.h"

namespace memloupe::reader::ctf {

struct PacketHeader {
  uint64_t offset = 0;  // of the packet in the file
  uint64_t size = 0;    // bytes, header included
  uint64_t time_begin = 0;
  uint64_t time_end = 0;
  uint16_t version = kMaxVersion;
  uint64_t pid = 0;
  uint16_t domain = 0;
  uint16_t verify_ix = kNoVerify;
  uint16_t verify_pred = 0;
  uint64_t verify_value = 0;
  uint64_t alloc_begin = 0;
  uint64_t alloc_end = 0;

  uint64_t content_begin() const { return offset + header_size(version); }
  uint64_t end() const { return offset + size; }
};

// Parses the header of the packet at `offset`; `file` must hold its whole header
// (header_bytes_needed says how many bytes that is). Checks the magic, the
// version (2..3), that the size covers the header, and begin <= end for the
// timestamps and the allocation ids. Does not check that the content fits.
Expected<PacketHeader> parse_packet_header(std::span<const uint8_t> file, uint64_t offset);

// How many bytes the header at `offset` occupies, judging by its version field;
// 0 if even the version field is cut off.
size_t header_bytes_needed(std::span<const uint8_t> file, uint64_t offset);

// Appends a version-3 header for a packet of `content_size` bytes after it.
void put_packet_header(Out& out, const PacketHeader& header, size_t content_size);

}  // namespace memloupe::reader::ctf
