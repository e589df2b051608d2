// ChunkCompressor: turns a finished chunk into its final, zstd-compressed form
// on the flush thread (TraceOutput::drain), so that the finaliser keeps the
// events as they are stored instead of decoding, regrouping and compressing
// them again after the program has exited (docs/RECORDER.md, "What the trace
// costs to write").
//
// It runs inside the traced process, so it must not allocate through the hooked
// functions: zstd's context is ZSTD_initStaticCCtx's, on a workspace mapped
// here, and its output and staging buffers are mappings too. Untouched pages of
// them cost nothing; a process that never compresses a chunk maps nothing.
//
// The level (MEMLOUPE_ZSTD_LEVEL, default kDefaultLevel) was chosen by
// measurement, size against the flush thread's CPU: docs/RECORDER.md, "What
// the trace costs to write".
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "recorder/sys.h"

struct ZSTD_CCtx_s;

namespace memloupe::recorder {

class ChunkCompressor {
 public:
  static constexpr int kDefaultLevel = 3;

  // The zstd level (MEMLOUPE_ZSTD_LEVEL, config.h): 1-19, or 0: chunks are
  // written raw. Set before the first chunk of a session.
  void set_level(int level) noexcept;

  // Whether a chunk of this type is compressed here: the events (the recorder's
  // column chunks) and heap snapshots, the bulk of a trace. The header stays as
  // it is (a few hundred bytes, written before the flush thread exists).
  static bool wants(std::span<const uint8_t> chunk) noexcept;

  // The chunk (24-byte header and payload, possibly in two pieces, `a` then
  // `b`) as a compressed chunk of the same type, valid until the next call; or
  // an empty span when it cannot be compressed here (too large, no memory),
  // and the caller writes it as it is.
  std::span<const uint8_t> compress(std::span<const uint8_t> a, std::span<const uint8_t> b) noexcept;

 private:
  bool ready() noexcept;  // maps the buffers on first use

  Mapping workspace_, out_, staging_;
  ZSTD_CCtx_s* cctx_ = nullptr;
  int level_ = 0;
  bool failed_ = false;  // a mapping failed once: chunks stay raw from then on
};

}  // namespace memloupe::recorder
