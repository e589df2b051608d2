#include "ctf/ctf_packet.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "ctf/ctf_cursor.h"

namespace memloupe::reader::ctf {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

}  // namespace

size_t header_bytes_needed(std::span<const uint8_t> file, uint64_t offset) {
  if (file.size() < offset || file.size() - offset < kVersionOffset + 2) return 0;
  uint16_t version = static_cast<uint16_t>(file[offset + kVersionOffset] |
                                           file[offset + kVersionOffset + 1] << 8);
  return header_size(version);
}

Expected<PacketHeader> parse_packet_header(std::span<const uint8_t> file, uint64_t offset) {
  Cursor in(file, offset, file.size());
  PacketHeader h;
  h.offset = offset;
  const uint32_t magic = in.u32("packet magic");
  const uint32_t size_bits = in.u32("packet size");
  h.time_begin = in.u64("packet timestamp_begin");
  h.time_end = in.u64("packet timestamp_end");
  in.u32("packet flush_duration");
  h.version = in.u16("packet version");
  if (in.failed()) return in.error();
  auto fail = [&](const std::string& what) {
    return Error{"at offset " + std::to_string(offset) + ": " + what, offset};
  };
  if (magic != kMagic) {
    return fail("not a memtrace CTF packet: magic " + hex(magic) + ", expected " + hex(kMagic));
  }
  if (h.version > kMaxVersion) {
    return fail("memtrace CTF version " + std::to_string(h.version) +
                " is newer than this memloupe (reads versions 2 and 3)");
  }
  if (h.version < kMinVersion) {
    return fail("memtrace CTF version " + std::to_string(h.version) +
                " is not supported (versions 2 and 3)");
  }
  h.pid = in.u64("packet pid");
  if (h.version >= 3) h.domain = in.u16("packet domain");
  h.verify_ix = in.u16("packet cache_verify_ix");
  h.verify_pred = in.u16("packet cache_verify_pred");
  h.verify_value = in.u64("packet cache_verify_val");
  h.alloc_begin = in.u64("packet alloc_id_begin");
  h.alloc_end = in.u64("packet alloc_id_end");
  if (in.failed()) return in.error();

  h.size = size_bits / 8;
  if (h.size < header_size(h.version)) {
    return fail("packet size " + std::to_string(h.size) + " bytes is smaller than its " +
                std::to_string(header_size(h.version)) + "-byte header");
  }
  if (h.time_begin > h.time_end) {
    return fail("packet timestamps out of order: begin " + std::to_string(h.time_begin) +
                " > end " + std::to_string(h.time_end));
  }
  if (h.alloc_begin > h.alloc_end) {
    return fail("packet allocation ids out of order: begin " + std::to_string(h.alloc_begin) +
                " > end " + std::to_string(h.alloc_end));
  }
  return h;
}

void put_packet_header(Out& out, const PacketHeader& h, size_t content_size) {
  out.u32(kMagic);
  out.u32(static_cast<uint32_t>((kHeaderSizeV3 + content_size) * 8));
  out.u64(h.time_begin);
  out.u64(h.time_end);
  out.u32(0);  // flush_duration
  out.u16(kMaxVersion);
  out.u64(h.pid);
  out.u16(h.domain);
  out.u16(h.verify_ix);
  out.u16(h.verify_pred);
  out.u64(h.verify_value);
  out.u64(h.alloc_begin);
  out.u64(h.alloc_end);
}

}  // namespace memloupe::reader::ctf
