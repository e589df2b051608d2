// Chunk-level access to memloupe traces, for the finaliser and the reader:
// listing chunks, inflating zstd payloads (bounded), writing compressed chunks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "format/chunk.h"
#include "format/events.h"
#include "format/expected.h"
#include "format/symbols_encoder.h"

namespace memloupe::reader {

struct ChunkView {
  uint64_t offset = 0;  // of the chunk header in the file
  uint8_t type = 0;     // a format::ChunkType, or an unknown type to skip
  uint8_t flags = 0;
  std::span<const uint8_t> stored;  // the payload as stored (CRC verified)
  uint32_t raw_len = 0;
};

// Checks the 16-byte prologue; returns the format version. Refuses newer versions.
Expected<uint32_t> check_prologue(std::span<const uint8_t> file);

// Reads the chunk at `offset` of `file`, verifying its header and payload CRC.
Expected<ChunkView> read_chunk(std::span<const uint8_t> file, uint64_t offset);

// True when the chunk at `offset` runs past the end of `file` (a header cut
// short, or an intact header announcing more payload than the file holds).
bool chunk_cut_short(std::span<const uint8_t> file, uint64_t offset);

// A chunk header read on its own: its magic, fields and CRC checked, the payload
// neither read nor checked (read_chunk does that for the chunks a caller wants).
struct ChunkHop {
  uint64_t offset = 0;  // of the chunk header
  format::ChunkHeader header;
  bool cut_short = false;  // the payload runs past the end of the file
  // Where the next chunk starts (the end of the file after a cut-short one).
  uint64_t next(uint64_t file_size) const {
    const uint64_t payload_at = offset + format::kChunkHeaderSize;
    return cut_short ? file_size : payload_at + header.stored_len;
  }
  bool is(format::ChunkType type) const { return header.type == static_cast<uint8_t>(type); }
};
// The header at `offset`, or nothing when it does not parse (or the file ends
// within it).
std::optional<ChunkHop> peek_chunk(std::span<const uint8_t> file, uint64_t offset);
// The offset of the next chunk magic "MLCK" at or after `from` (file.size(): none).
uint64_t find_chunk_magic(std::span<const uint8_t> file, uint64_t from);

// What a walk over chunk headers does at a header that does not parse.
enum class BrokenHeader {
  Stop,    // nothing after it can be trusted to be a chunk boundary
  Resync,  // go on at the next chunk magic, so chunks after the damage survive
};
struct ChunkWalk {
  uint64_t stopped_at = 0;  // a broken header, a cut-short chunk, the visitor's, or the end
  bool complete = false;    // every header up to the end parsed, none cut short,
                            // and the visitor never stopped the walk
};
// The one chunk walker: hops from chunk header to chunk header from `from` (a
// chunk boundary) while the offset is below `end` (clamped to the file), reading
// headers only, so walking a large trace costs a few hops, not a read of every
// payload. Calls visit(const ChunkHop&) for every header that parses, a
// cut-short last one included; visit returns false to stop the walk.
template <class Visit>
ChunkWalk walk_chunks(std::span<const uint8_t> file, uint64_t from, uint64_t end,
                      BrokenHeader broken, Visit&& visit) {
  end = std::min<uint64_t>(end, file.size());
  bool complete = true;
  uint64_t off = from;
  while (off < end) {
    const std::optional<ChunkHop> hop = peek_chunk(file, off);
    if (!hop) {
      complete = false;
      if (broken == BrokenHeader::Stop) return {off, false};
      off = find_chunk_magic(file, off + 1);
      continue;
    }
    if (!visit(*hop)) return {off, false};
    if (hop->cut_short) return {off, false};
    off = hop->next(file.size());
  }
  return {complete ? end : off, complete};
}

struct ChunkList {
  std::vector<ChunkView> chunks;  // in file order, all intact
  std::optional<Error> error;     // why the scan stopped before the end, if it did
};
// Checks the prologue and lists every chunk up to the end or the first damage.
ChunkList scan_chunks(std::span<const uint8_t> file);

// The raw payload of `chunk`: the stored bytes, or their decompression into
// `buffer` (never more than chunk.raw_len <= kMaxChunkRaw bytes). A piece of an
// events zstd stream (format::kChunkZstdStream) is refused: it needs the
// pieces before it, which ChunkInflater keeps.
Expected<std::span<const uint8_t>> chunk_payload(const ChunkView& chunk,
                                                 std::vector<uint8_t>& buffer);

// The raw payloads of a file's chunks read in order, each chunk as
// chunk_payload() gives it, and the pieces of the events zstd stream through
// one decompression context kept from piece to piece (docs/FORMAT.md §3).
class ChunkInflater {
 public:
  ChunkInflater();
  ~ChunkInflater();
  ChunkInflater(const ChunkInflater&) = delete;
  ChunkInflater& operator=(const ChunkInflater&) = delete;

  Expected<std::span<const uint8_t>> payload(const ChunkView& chunk, std::vector<uint8_t>& buffer);

 private:
  struct Context;
  std::unique_ptr<Context> stream_;  // made at the first piece
  bool started_ = false;             // a piece started the stream and none failed since
};

// Appends a chunk holding `payload`, zstd-compressed at `level` when that is
// smaller; level <= 0 stores it uncompressed.
void append_chunk_compressed(std::vector<uint8_t>& out, format::ChunkType type,
                             std::span<const uint8_t> payload, int level);

// Appends the symbols section held by `symbols`, compressed.
void append_symbols(std::vector<uint8_t>& trace, format::SymbolsEncoder& symbols, int zstd_level);

}  // namespace memloupe::reader
