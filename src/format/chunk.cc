#include "format/chunk.h"

#include <cstring>

#include "format/crc32c.h"
#include "format/varint.h"

namespace memloupe::format {

void write_chunk_header(uint8_t* out, ChunkType type, uint8_t flags,
                        std::span<const uint8_t> payload, uint32_t raw_len) noexcept {
  put_u32(out, kChunkMagic);
  out[4] = static_cast<uint8_t>(type);
  out[5] = flags;
  put_u16(out + 6, 0);
  put_u32(out + 8, static_cast<uint32_t>(payload.size()));
  put_u32(out + 12, raw_len);
  put_u32(out + 16, crc32c(payload.data(), payload.size()));
  put_u32(out + 20, crc32c(out, 20));
}

ChunkHeaderStatus parse_chunk_header(const uint8_t* in, ChunkHeader& out) noexcept {
  if (get_u32(in) != kChunkMagic) return ChunkHeaderStatus::BadMagic;
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // fuzzers: let mutations reach the decoders
  if (get_u32(in + 20) != crc32c(in, 20)) return ChunkHeaderStatus::BadCheck;
#endif
  out.type = in[4];
  out.flags = in[5];
  out.stored_len = get_u32(in + 8);
  out.raw_len = get_u32(in + 12);
  out.payload_crc = get_u32(in + 16);
  if (get_u16(in + 6) != 0 || (out.flags & ~(kChunkZstd | kChunkZstdStream | kChunkStreamStart)) != 0)
    return ChunkHeaderStatus::BadFields;
  // A stream piece is compressed, an events chunk, and only a piece may start a stream.
  if ((out.flags & kChunkZstdStream) &&
      (!(out.flags & kChunkZstd) || out.type != static_cast<uint8_t>(ChunkType::EventsColumns)))
    return ChunkHeaderStatus::BadFields;
  if ((out.flags & kChunkStreamStart) && !(out.flags & kChunkZstdStream)) return ChunkHeaderStatus::BadFields;
  if (out.raw_len > kMaxChunkRaw) return ChunkHeaderStatus::BadFields;
  if (!(out.flags & kChunkZstd) && out.raw_len != out.stored_len)
    return ChunkHeaderStatus::BadFields;
  return ChunkHeaderStatus::Ok;
}

void append_chunk(std::vector<uint8_t>& out, ChunkType type, uint8_t flags,
                  std::span<const uint8_t> payload, uint32_t raw_len) {
  size_t at = out.size();
  out.resize(at + kChunkHeaderSize);
  write_chunk_header(out.data() + at, type, flags, payload, raw_len);
  out.insert(out.end(), payload.begin(), payload.end());
}

void write_prologue(uint8_t* out, uint32_t version) noexcept {
  std::memcpy(out, kFileMagic, sizeof kFileMagic);
  put_u32(out + 8, version);
  put_u32(out + 12, 0);
}

}  // namespace memloupe::format
