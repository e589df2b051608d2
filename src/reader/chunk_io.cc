#include "reader/chunk_io.h"

#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "format/crc32c.h"
#include "format/varint.h"

namespace memloupe::reader {

using format::ChunkType;

namespace {

std::string hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

Error at(uint64_t offset, const std::string& what) {
  return Error{"at offset " + std::to_string(offset) + ": " + what, offset};
}

// This thread's compression context, kept for its next chunk. ZSTD_compress
// makes and frees one per call: at the index's level 6 its tables are ~3 MB,
// mapped, zeroed and page-faulted afresh for each of the annex's, the
// symbols' and the index's chunks written after a followed program's exit
// (docs/RECORDER.md, "What is left after the exit, 2026-11-26 (third day)").
// A reused context gives the same bytes (ZSTD_compress is
// ZSTD_compressCCtx on a context of its own).
ZSTD_CCtx* thread_cctx() {
  struct Free {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
  };
  thread_local std::unique_ptr<ZSTD_CCtx, Free> cctx(ZSTD_createCCtx());
  return cctx.get();
}

}  // namespace

Expected<uint32_t> check_prologue(std::span<const uint8_t> file) {
  if (file.size() < sizeof format::kFileMagic ||
      std::memcmp(file.data(), format::kFileMagic, sizeof format::kFileMagic) != 0)
    return at(0, "expected the memloupe magic \"\\x8aMLTRACE\"");
  if (file.size() < format::kPrologueSize)
    return at(file.size(), "expected the 16-byte prologue; the file ends early");
  const uint32_t version = format::get_u32(file.data() + 8);
  if (version > format::kFormatVersion)
    return Error{"trace format version " + std::to_string(version) +
                     " is newer than this memloupe (reads up to " +
                     std::to_string(format::kFormatVersion) + ")",
                 8};
  if (version == 0) return at(8, "expected a format version of at least 1, found 0");
  if (format::get_u32(file.data() + 12) != 0) return at(12, "expected a zero reserved word");
  return version;
}

Expected<ChunkView> read_chunk(std::span<const uint8_t> file, uint64_t offset) {
  if (file.size() - offset < format::kChunkHeaderSize)
    return at(offset, "expected a " + std::to_string(format::kChunkHeaderSize) +
                          "-byte chunk header; the file ends early");
  format::ChunkHeader h;
  switch (format::parse_chunk_header(file.data() + offset, h)) {
    case format::ChunkHeaderStatus::Ok:
      break;
    case format::ChunkHeaderStatus::BadMagic:
      return at(offset, "expected a chunk header (magic \"MLCK\"), found " +
                            hex32(format::get_u32(file.data() + offset)));
    case format::ChunkHeaderStatus::BadCheck:
      return at(offset + 20, "expected the chunk header's CRC-32C " +
                                 hex32(format::crc32c(file.data() + offset, 20)) +
                                 ", found " + hex32(format::get_u32(file.data() + offset + 20)));
    case format::ChunkHeaderStatus::BadFields:
      return at(offset, "expected a chunk header with known flags and lengths <= 16 MiB "
                        "(raw length == stored length when uncompressed)");
  }
  const uint64_t payload_at = offset + format::kChunkHeaderSize;
  if (file.size() - payload_at < h.stored_len)
    return at(payload_at, "expected a " + std::to_string(h.stored_len) +
                              "-byte chunk payload; the file ends early");
  ChunkView v{offset, h.type, h.flags, file.subspan(payload_at, h.stored_len), h.raw_len};
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION  // fuzzers: let mutations reach the decoders
  const uint32_t crc = format::crc32c(v.stored.data(), v.stored.size());
  if (crc != h.payload_crc)
    return at(payload_at, "expected a chunk payload with CRC-32C " + hex32(h.payload_crc) +
                              ", found " + hex32(crc) + " (the payload is damaged)");
#endif
  return v;
}

bool chunk_cut_short(std::span<const uint8_t> file, uint64_t offset) {
  if (file.size() - offset < format::kChunkHeaderSize) return true;
  const std::optional<ChunkHop> hop = peek_chunk(file, offset);
  return hop && hop->cut_short;
}

std::optional<ChunkHop> peek_chunk(std::span<const uint8_t> file, uint64_t offset) {
  ChunkHop hop;
  if (file.size() - offset < format::kChunkHeaderSize ||
      format::parse_chunk_header(file.data() + offset, hop.header) != format::ChunkHeaderStatus::Ok)
    return std::nullopt;
  hop.offset = offset;
  hop.cut_short = file.size() - offset - format::kChunkHeaderSize < hop.header.stored_len;
  return hop;
}

uint64_t find_chunk_magic(std::span<const uint8_t> file, uint64_t from) {
  for (uint64_t i = from; i + 4 <= file.size(); ++i)
    if (file[i] == 'M' && file[i + 1] == 'L' && file[i + 2] == 'C' && file[i + 3] == 'K') return i;
  return file.size();
}

ChunkList scan_chunks(std::span<const uint8_t> file) {
  ChunkList list;
  auto version = check_prologue(file);
  if (!version) {
    list.error = version.error();
    return list;
  }
  const ChunkWalk walk =
      walk_chunks(file, format::kPrologueSize, file.size(), BrokenHeader::Stop, [&](const ChunkHop& hop) {
        auto chunk = read_chunk(file, hop.offset);
        if (!chunk) {
          list.error = chunk.error();
          return false;
        }
        list.chunks.push_back(*chunk);
        return true;
      });
  // A header that does not parse: read_chunk says why.
  if (!walk.complete && !list.error)
    if (auto chunk = read_chunk(file, walk.stopped_at); !chunk) list.error = chunk.error();
  return list;
}

Expected<std::span<const uint8_t>> chunk_payload(const ChunkView& chunk,
                                                 std::vector<uint8_t>& buffer) {
  if (!(chunk.flags & format::kChunkZstd)) return chunk.stored;
  if (chunk.flags & format::kChunkZstdStream)
    return at(chunk.offset, "expected a chunk that inflates alone, found a piece of the events' zstd stream");
  // raw_len is at most kMaxChunkRaw (checked with the header), so this is bounded.
  buffer.resize(chunk.raw_len);
  const size_t n = ZSTD_decompress(buffer.data(), buffer.size(), chunk.stored.data(),
                                   chunk.stored.size());
  const uint64_t payload_at = chunk.offset + format::kChunkHeaderSize;
  if (ZSTD_isError(n))
    return at(payload_at, std::string("expected a zstd frame of at most ") +
                              std::to_string(chunk.raw_len) + " bytes: " + ZSTD_getErrorName(n));
  if (n != chunk.raw_len)
    return at(payload_at, "expected " + std::to_string(chunk.raw_len) +
                              " bytes after decompression, found " + std::to_string(n));
  return std::span<const uint8_t>(buffer.data(), n);
}

// The recorder's stream uses zstd's default window for its level (2 MiB at
// the idle level 5, 8 MiB at level 19, the highest MEMLOUPE_ZSTD_LEVEL): a
// larger one in a damaged or hostile file is refused instead of allocated.
constexpr int kMaxWindowLog = 24;

struct ChunkInflater::Context {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  ~Context() { ZSTD_freeDCtx(dctx); }
};

ChunkInflater::ChunkInflater() = default;
ChunkInflater::~ChunkInflater() = default;

Expected<std::span<const uint8_t>> ChunkInflater::payload(const ChunkView& chunk, std::vector<uint8_t>& buffer) {
  if (!(chunk.flags & format::kChunkZstdStream)) return chunk_payload(chunk, buffer);
  const uint64_t payload_at = chunk.offset + format::kChunkHeaderSize;
  if (!stream_) {
    stream_ = std::make_unique<Context>();
    if (stream_->dctx == nullptr) {
      stream_.reset();
      return at(payload_at, "cannot allocate a zstd decompression context");
    }
    ZSTD_DCtx_setParameter(stream_->dctx, ZSTD_d_windowLogMax, kMaxWindowLog);
  }
  if (chunk.flags & format::kChunkStreamStart) {
    ZSTD_DCtx_reset(stream_->dctx, ZSTD_reset_session_only);
    started_ = true;
  }
  if (!started_)
    return at(chunk.offset, "expected the start of the events' zstd stream, found a piece that continues it");
  buffer.resize(chunk.raw_len);
  ZSTD_inBuffer in{chunk.stored.data(), chunk.stored.size(), 0};
  ZSTD_outBuffer out{buffer.data(), buffer.size(), 0};
  // Each piece ends at a flush: every byte it holds comes out now. A piece
  // that inflates to more than raw_len stops with input left.
  while (in.pos < in.size) {
    const size_t before_in = in.pos, before_out = out.pos;
    const size_t r = ZSTD_decompressStream(stream_->dctx, &out, &in);
    if (ZSTD_isError(r)) {
      started_ = false;  // the pieces after this one cannot be inflated
      return at(payload_at, std::string("expected a piece of a zstd stream: ") + ZSTD_getErrorName(r));
    }
    if (in.pos == before_in && out.pos == before_out) break;  // no progress: output full
  }
  bool whole = in.pos == in.size && out.pos == chunk.raw_len;
  if (whole) {
    // A piece that inflates to more than raw_len may have handed all its input
    // to zstd, which holds the rest: one more byte asked for tells.
    uint8_t probe;
    ZSTD_outBuffer one{&probe, 1, 0};
    ZSTD_inBuffer none{nullptr, 0, 0};
    const size_t r = ZSTD_decompressStream(stream_->dctx, &one, &none);
    whole = !ZSTD_isError(r) && one.pos == 0;
  }
  if (!whole) {
    started_ = false;
    return at(payload_at, "expected a zstd stream piece of " + std::to_string(chunk.raw_len) +
                              " bytes, found " + (out.pos == chunk.raw_len ? "more" : std::to_string(out.pos)));
  }
  return std::span<const uint8_t>(buffer.data(), out.pos);
}

void append_chunk_compressed(std::vector<uint8_t>& out, ChunkType type,
                             std::span<const uint8_t> payload, int level) {
  if (level <= 0) {
    format::append_chunk(out, type, payload);
    return;
  }
  // Not zero-filled first (a vector's would be): zstd writes what is used,
  // a tenth of the bound on an index, and the rest is never touched.
  const size_t bound = ZSTD_compressBound(payload.size());
  const std::unique_ptr<uint8_t[]> packed(new uint8_t[bound]);
  ZSTD_CCtx* const cctx = thread_cctx();
  const size_t n = cctx ? ZSTD_compressCCtx(cctx, packed.get(), bound, payload.data(), payload.size(), level)
                        : ZSTD_compress(packed.get(), bound, payload.data(), payload.size(), level);
  if (ZSTD_isError(n) || n >= payload.size()) {
    format::append_chunk(out, type, payload);
    return;
  }
  format::append_chunk(out, type, format::kChunkZstd, {packed.get(), n},
                       static_cast<uint32_t>(payload.size()));
}

void append_symbols(std::vector<uint8_t>& trace, format::SymbolsEncoder& symbols,
                    int zstd_level) {
  for (const std::vector<uint8_t>& payload : symbols.take_payloads())
    append_chunk_compressed(trace, ChunkType::Symbols, payload, zstd_level);
}

}  // namespace memloupe::reader
