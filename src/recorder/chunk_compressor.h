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
// The level (MEMLOUPE_ZSTD_LEVEL) is, by default, chosen by how busy the
// program keeps the CPUs (set_program_threads): kIdleLevel while the program
// has fewer threads than the process may run on, so the flush thread has a
// core the program leaves idle; kBusyLevel when it has as many or more, where
// every cycle the flush thread spends is taken from the program. Measured
// (docs/RECORDER.md, "Compressed on the flush thread"): level 6 cost (a)
// (4 threads, 2 cores) 30% more instructions in its recording, level 3 7%;
// on single-threaded programs level 6 costs ~3% and gives a fifth smaller
// traces. The busy level is 1 (2 until 2026-11-26, 3 before): level 3's match
// tables (768 KiB against 384 KiB) missed the cache, and on (a) zstd took ~100
// ms of the flush thread's CPU at 3 against ~60 at 2 (docs/RECORDER.md, "Costs
// in `--all` mode"). Level 1 then wrote 14% more than 2, each chunk a frame of
// its own; as pieces of one stream (below) it writes 0.8% more on (a), and
// zstd's share of the consumer's samples falls by a quarter (docs/RECORDER.md,
// "2026-11-26: the flush thread's table and zstd").
// The idle level is 5 with a minimum match of 6 bytes, not 6 (lazy matching):
// the flush thread's core is not idle under `memloupe run`, whose follower
// takes it, and level 6 cost (b) ~45 ms more of CPU a run for events 2% (and
// sqlite's 3%) smaller (docs/RECORDER.md, "The idle zstd level"); a minimum
// match of 6 instead of level 5's 5 is as fast and ~0.2-1% smaller on the
// recorder's column streams. Its match finder is zstd's hash chain with
// smaller tables, not the level's row match finder (below).
//
// The events chunks are the pieces of one zstd stream (docs/FORMAT.md §3,
// format::kChunkZstdStream): each chunk ends at a flush, so a follower can
// inflate it as soon as it is written, while zstd matches across chunks as in
// one long frame. That lets the recorder cut chunks every few tens of
// milliseconds (TraceOutput) without the loss of ratio of as many small frames
// (docs/RECORDER.md, "A chunk every 40 ms, one zstd stream"). A new frame (a
// stream start) begins at the first chunk, at each change of level, and after
// a chunk that could not be compressed. Heap snapshots are one frame each, on
// a context of their own.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

#include "recorder/sys.h"

struct ZSTD_CCtx_s;

namespace memloupe::recorder {

class ChunkCompressor {
 public:
  static constexpr int kAuto = -1;  // the default: by set_program_threads
  static constexpr int kBusyLevel = 1, kIdleLevel = 5;
  static constexpr int kIdleMinMatch = 6;  // kIdleLevel's ZSTD_c_minMatch
  // kIdleLevel's match finder: zstd's hash chain with smaller tables (256 KiB of
  // hash, 128 KiB of chain) instead of the level's row match finder (2.5 MiB):
  // (b)'s events compress in ~16% less time for 0.4% more bytes, sqlite3's in
  // less time and fewer bytes (docs/RECORDER.md, "2026-11-25, third round:
  // the flush thread on (b)"). The tables were 1 MiB and 256 KiB (2^18, 2^16)
  // until 2026-11-26: the chain's insertions miss the cache on every position,
  // and a quarter of those tables cut zstd's samples on (b) by ~15% for 2% more
  // bytes (sqlite3's 0.3%) (docs/RECORDER.md, "2026-11-26: the flush thread's
  // table and zstd").
  static constexpr int kIdleHashLog = 16, kIdleChainLog = 15;

  // The zstd level (MEMLOUPE_ZSTD_LEVEL, config.h): kAuto, 1-19, or 0: chunks
  // are written raw. Set before the first chunk of each file (TraceOutput::open).
  // `stream_events`: the events chunks are pieces of one zstd stream (--all
  // mode, whose chunks are cut every few ms); else one frame each, as a
  // sampled trace's few chunks gain nothing from a stream, whose tables
  // (~1.3 MiB at the idle level) are cleared whole where a small chunk's
  // frame touches a small part of them.
  void set_level(int level, bool stream_events = false) noexcept;
  // kAuto: the number of threads the program has now (the flush thread asks
  // every period); `cpus`, the CPUs the process may run on.
  void set_program_threads(size_t threads, size_t cpus) noexcept {
    if (level_ == kAuto) auto_level_.store(threads < cpus ? kIdleLevel : kBusyLevel, std::memory_order_relaxed);
  }

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

  // A new frame's parameters on `z` for `level`.
  void set_parameters(ZSTD_CCtx_s* z, int level) const noexcept;
  // The events' stream: the chunk's piece into out_, or 0 when it failed.
  size_t stream_piece(const uint8_t* raw, size_t n, int level, bool& start) noexcept;

  Mapping workspace_, frame_workspace_, out_, staging_;
  ZSTD_CCtx_s* cctx_ = nullptr;        // the events' stream
  ZSTD_CCtx_s* frame_cctx_ = nullptr;  // snapshots: a frame each
  int level_ = 0;
  int stream_level_ = 0;  // the current stream's level; 0: the next piece starts a stream
  bool stream_events_ = false;
  std::atomic<int> auto_level_{kBusyLevel};  // kAuto's current level
  bool failed_ = false;  // a mapping failed once: chunks stay raw from then on
};

}  // namespace memloupe::recorder
