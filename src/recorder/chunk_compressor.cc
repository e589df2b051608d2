#include "recorder/chunk_compressor.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_initStaticCCtx, ZSTD_estimateCCtxSize
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

void ChunkCompressor::set_level(int level) noexcept {
  if (level == level_) return;
  level_ = level;
  auto_level_.store(kBusyLevel, std::memory_order_relaxed);
  cctx_ = nullptr;  // the workspace is sized for the level
  failed_ = false;
  workspace_.reset(), out_.reset(), staging_.reset();
}

bool ChunkCompressor::ready() noexcept {
  if (cctx_ != nullptr) return true;
  if (failed_ || level_ == 0) return false;
  // Sized for the largest level this session may use (the idle level's
  // parameters make its tables smaller than its level's, never larger).
  const size_t work = ZSTD_estimateCCtxSize(level_ == kAuto ? kIdleLevel : level_);
  workspace_ = Mapping::anonymous(work);
  out_ = Mapping::anonymous(kChunkHeaderSize + ZSTD_COMPRESSBOUND(kMaxChunk));
  staging_ = Mapping::anonymous(kMaxChunk);
  if (workspace_ && out_ && staging_) cctx_ = ZSTD_initStaticCCtx(workspace_.data(), work);
  if (cctx_ == nullptr) {
    failed_ = true;
    workspace_.reset(), out_.reset(), staging_.reset();
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
  size_t n;
  const int level = level_ == kAuto ? auto_level_.load(std::memory_order_relaxed) : level_;
  if (level_ == kAuto && level == kIdleLevel) {
    // The advanced API, for the minimum match (ZSTD_compressCCtx takes a level
    // only); both are set each time, as the busy level's calls go around them.
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_minMatch, kIdleMinMatch);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_useRowMatchFinder, ZSTD_ps_disable);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_hashLog, kIdleHashLog);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_chainLog, kIdleChainLog);
    n = ZSTD_compress2(cctx_, out + kChunkHeaderSize, out_.size() - kChunkHeaderSize, chunk + kChunkHeaderSize, raw);
  } else {
    n = ZSTD_compressCCtx(cctx_, out + kChunkHeaderSize, out_.size() - kChunkHeaderSize, chunk + kChunkHeaderSize,
                          raw, level);
  }
  if (ZSTD_isError(n)) return {};
  // Compressed even when that is no smaller (a few bytes on a tiny chunk): the
  // finaliser keeps a file as stored only when all its events are compressed.
  format::write_chunk_header(out, type, format::kChunkZstd, {out + kChunkHeaderSize, n},
                             static_cast<uint32_t>(raw));
  return {out, kChunkHeaderSize + n};
}

}  // namespace memloupe::recorder
