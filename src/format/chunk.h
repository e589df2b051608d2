// Chunk framing: every chunk is a 24-byte header (layout in wire.h) followed by
// its payload. The header carries the payload's stored and raw lengths, the
// payload's CRC-32C and a CRC-32C of the header itself, so a reader can tell a
// damaged length from a damaged payload and never follows a corrupt length.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "format/wire.h"

namespace memloupe::format {

struct ChunkHeader {
  uint8_t type = 0;         // a ChunkType (unknown types are skipped by readers)
  uint8_t flags = 0;        // kChunkZstd, kChunkZstdStream, kChunkStreamStart
  uint32_t stored_len = 0;  // bytes of payload in the file
  uint32_t raw_len = 0;     // bytes after decompression (== stored_len if not compressed)
  uint32_t payload_crc = 0;
};

// Writes the 24-byte header for `payload` (as stored) into `out`.
void write_chunk_header(uint8_t* out, ChunkType type, uint8_t flags,
                        std::span<const uint8_t> stored_payload, uint32_t raw_len) noexcept;

enum class ChunkHeaderStatus : uint8_t { Ok, BadMagic, BadCheck, BadFields };
// Parses 24 bytes; Ok means the magic and the header check match and the lengths
// are plausible (raw <= kMaxChunkRaw; uncompressed: raw == stored).
ChunkHeaderStatus parse_chunk_header(const uint8_t* in, ChunkHeader& out) noexcept;

// Appends header + payload (uncompressed) to `out`. For the finaliser and tests;
// uses the heap, so not for the recorder.
void append_chunk(std::vector<uint8_t>& out, ChunkType type, uint8_t flags,
                  std::span<const uint8_t> stored_payload, uint32_t raw_len);
inline void append_chunk(std::vector<uint8_t>& out, ChunkType type,
                         std::span<const uint8_t> payload) {
  append_chunk(out, type, 0, payload, static_cast<uint32_t>(payload.size()));
}

// Receives each finished chunk (header + payload), complete and checksummed.
// The bytes are only valid during the call.
class ChunkSink {
 public:
  virtual void write_chunk(std::span<const uint8_t> chunk) noexcept = 0;

 protected:
  ~ChunkSink() = default;
};

// The 16-byte file prologue.
void write_prologue(uint8_t* out, uint32_t version = kFormatVersion) noexcept;

}  // namespace memloupe::format
