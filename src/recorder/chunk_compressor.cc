#include "recorder/chunk_compressor.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStaticCCtx, ZSTD_estimateCStreamSize
#include <zstd.h>

#include <cstring>

#include "format/chunk.h"
#include "format/encoder.h"
#include "format/varint.h"
#include "format/wire.h"

namespace memloupe::recorder {
namespace {

using format::kChunkHeaderSize;

// The largest chunk the recorder writes (an encoder's column chunk; a snapshot
// chunk is at most 1 MiB): larger ones are written as they are.
constexpr size_t kMaxChunk = format::Encoder::kMaxChunk;
static_assert(kMaxChunk >= kChunkHeaderSize + (1u << 20));

}  // namespace

// zstd's tracing hooks are weak references that a program's own definitions
// would satisfy at load time; defined here (hidden, tracing off) the linker
// binds them inside the library, so the compressor never calls into the program.
extern "C" {
unsigned long long ZSTD_trace_compress_begin(const ZSTD_CCtx_s*) { return 0; }
void ZSTD_trace_compress_end(unsigned long long, const void*) {}
}

bool ChunkCompressor::wants(std::span<const uint8_t> chunk) noexcept {
  if (chunk.size() < kChunkHeaderSize || format::get_u32(chunk.data()) != format::kChunkMagic) return false;
  const auto type = static_cast<format::ChunkType>(chunk[4]);
  const bool stored = chunk[5] == 0;
  return stored && (type == format::ChunkType::EventsColumns || type == format::ChunkType::Snapshot) &&
         chunk.size() == kChunkHeaderSize + format::get_u32(chunk.data() + 8);
}

void ChunkCompressor::set_level(int level, bool stream_events) noexcept {
  stream_level_ = 0;  // a new file: its first events chunk starts a stream
  stream_events_ = stream_events;
  if (level == level_) return;
  level_ = level;
  auto_level_.store(kBusyLevel, std::memory_order_relaxed);
  cctx_ = frame_cctx_ = nullptr;  // the workspaces are sized for the level
  failed_ = false;
  workspace_.reset(), frame_workspace_.reset(), out_.reset(), staging_.reset();
}

bool ChunkCompressor::ready() noexcept {
  if (cctx_ != nullptr) return true;
  if (failed_ || level_ == 0) return false;
  // Sized for the largest level this session may use (the idle level's
  // parameters make its tables smaller than its level's, never larger; under
  // kAuto the busy level's window is the smaller). Mapped, so pages are
  // touched only as used.
  const int top = level_ == kAuto ? kIdleLevel : level_;
  const size_t work = ZSTD_estimateCStreamSize(top);
  const size_t frame_work = ZSTD_estimateCCtxSize(top);
  workspace_ = Mapping::anonymous(work);
  frame_workspace_ = Mapping::anonymous(frame_work);
  out_ = Mapping::anonymous(kChunkHeaderSize + ZSTD_COMPRESSBOUND(kMaxChunk));
  staging_ = Mapping::anonymous(kMaxChunk);
  if (workspace_ && frame_workspace_ && out_ && staging_) {
    cctx_ = ZSTD_initStaticCCtx(workspace_.data(), work);
    frame_cctx_ = ZSTD_initStaticCCtx(frame_workspace_.data(), frame_work);
  }
  if (cctx_ == nullptr || frame_cctx_ == nullptr) {
    failed_ = true;
    cctx_ = frame_cctx_ = nullptr;
    workspace_.reset(), frame_workspace_.reset(), out_.reset(), staging_.reset();
  }
  return cctx_ != nullptr;
}

std::span<const uint8_t> ChunkCompressor::compress(std::span<const uint8_t> a,
                                                   std::span<const uint8_t> b) noexcept {
  const size_t total = a.size() + b.size();
  if (total > kMaxChunk || total < kChunkHeaderSize || !ready()) return {};
  const uint8_t* chunk = a.data();
  if (!b.empty()) {  // wrapped around the ring: zstd wants one piece
    auto* s = static_cast<uint8_t*>(staging_.data());
    std::memcpy(s, a.data(), a.size());
    std::memcpy(s + a.size(), b.data(), b.size());
    chunk = s;
  }
  const auto type = static_cast<format::ChunkType>(chunk[4]);
  const size_t raw = total - kChunkHeaderSize;
  auto* out = static_cast<uint8_t*>(out_.data());
  const int level = level_ == kAuto ? auto_level_.load(std::memory_order_relaxed) : level_;
  uint8_t flags = format::kChunkZstd;
  size_t n;
  if (type == format::ChunkType::EventsColumns && stream_events_) {
    bool start = false;
    n = stream_piece(chunk + kChunkHeaderSize, raw, level, start);
    if (n == 0) return {};
    flags |= format::kChunkZstdStream | (start ? format::kChunkStreamStart : 0);
  } else {
    set_parameters(frame_cctx_, level);
    n = ZSTD_compress2(frame_cctx_, out + kChunkHeaderSize, out_.size() - kChunkHeaderSize, chunk + kChunkHeaderSize,
                       raw);
    if (ZSTD_isError(n)) return {};
  }
  // Compressed even when that is no smaller (a few bytes on a tiny chunk): the
  // finaliser keeps a file as stored only when all its events are compressed.
  format::write_chunk_header(out, type, flags, {out + kChunkHeaderSize, n}, static_cast<uint32_t>(raw));
  return {out, kChunkHeaderSize + n};
}

void ChunkCompressor::set_parameters(ZSTD_CCtx_s* z, int level) const noexcept {
  ZSTD_CCtx_reset(z, ZSTD_reset_session_and_parameters);
  ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level);
  if (level_ == kAuto && level == kIdleLevel) {  // the idle level's own parameters (chunk_compressor.h)
    ZSTD_CCtx_setParameter(z, ZSTD_c_minMatch, kIdleMinMatch);
    ZSTD_CCtx_setParameter(z, ZSTD_c_useRowMatchFinder, ZSTD_ps_disable);
    ZSTD_CCtx_setParameter(z, ZSTD_c_hashLog, kIdleHashLog);
    ZSTD_CCtx_setParameter(z, ZSTD_c_chainLog, kIdleChainLog);
  }
}

size_t ChunkCompressor::stream_piece(const uint8_t* raw, size_t n, int level, bool& start) noexcept {
  if (stream_level_ != level) {
    // A new frame: the reader resets its stream at this piece (kChunkStreamStart).
    set_parameters(cctx_, level);
    stream_level_ = level;
    start = true;
  }
  auto* out = static_cast<uint8_t*>(out_.data()) + kChunkHeaderSize;
  ZSTD_outBuffer o{out, out_.size() - kChunkHeaderSize, 0};
  ZSTD_inBuffer in{raw, n, 0};
  size_t left;
  do {
    left = ZSTD_compressStream2(cctx_, &o, &in, ZSTD_e_flush);
  } while (!ZSTD_isError(left) && left != 0 && o.pos < o.size);
  if (ZSTD_isError(left) || left != 0 || o.pos == 0) {
    stream_level_ = 0;  // the stream is broken: the next piece starts another
    return 0;
  }
  return o.pos;
}

}  // namespace memloupe::recorder
