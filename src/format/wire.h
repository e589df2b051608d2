// The byte-level layout of a memloupe trace: magic numbers, chunk types and
// event codes, shared by the encoder (src/format) and the reader (src/reader).
// docs/FORMAT.md is the prose version of this file; keep them in step.
//
// File:
//   prologue (16 B) | header chunk | events chunk* | symbols chunk*
//
// Prologue:
//   0  u8[8]  kFileMagic  "\x8aMLTRACE"  (high bit: catches 7-bit transfers)
//   8  u32    format version (kFormatVersion)
//   12 u32    0 (reserved)
//
// Chunk header (24 B, all little-endian):
//   0  u32 kChunkMagic "MLCK"      4  u8 ChunkType   5  u8 flags (kChunkZstd...)
//   6  u16 0 (reserved)            8  u32 stored payload length
//   12 u32 raw payload length      16 u32 CRC-32C of the stored payload
//   20 u32 CRC-32C of header bytes 0..19
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::format {

inline constexpr uint8_t kFileMagic[8] = {0x8a, 'M', 'L', 'T', 'R', 'A', 'C', 'E'};
// 2: the header ends with the time unit (docs/FORMAT.md §4) and the backtrace
// hash folds the frames outermost first (§5.5). 3: events chunks may be pieces
// of one zstd stream (kChunkZstdStream). 4: block references name their block
// from three landmarks per thread over a longer window (§5.6). 5: column-form
// chunks keep each thread's head, word, size and ref fields in a lane of their
// own, with an order stream (§5.8, kMaxLanes). Readers read 1 to 5.
inline constexpr uint32_t kFormatVersion = 5;
// The first version whose column chunks have lanes.
inline constexpr uint32_t kLanesVersion = 5;
inline constexpr size_t kPrologueSize = 16;

inline constexpr uint32_t kChunkMagic = 0x4b434c4d;  // "MLCK" read as little-endian u32
inline constexpr size_t kChunkHeaderSize = 24;
// A reader never inflates a chunk beyond this; writers never produce bigger ones.
inline constexpr uint32_t kMaxChunkRaw = 16u << 20;

enum class ChunkType : uint8_t {
  Header = 1,         // TraceInfo; exactly one, first
  Events = 2,         // u64 start time (µs), u64 alloc-id base, then events (row form)
  Symbols = 3,        // address -> inlined frames, appended by the finaliser
  EventsColumns = 4,  // the same prefix, u8 stream count, varint stream lengths, streams
  AnalysisIndex = 5,  // precomputed analysis (src/analysis/index.h), last; appended by the CLI's finalise
  Snapshot = 6,       // one part of a heap snapshot (format/snapshot_wire.h); no events
  Types = 7,          // allocation site -> C++ type (src/types/type_table.h), after the symbols
};

// The streams of the column form, in payload order: each event field belongs to
// one (docs/FORMAT.md §5.8). In the row form they are simply interleaved.
enum class Stream : uint8_t {
  Head = 0,   // event header bytes, ExtType bytes
  Time = 1,   // varint(dt >> 4)
  Word = 2,   // AllocCached words, their extra flag byte, Alloc flags bytes
  Size = 3,   // allocation sizes
  Addr = 4,   // address fields (Mode::All)
  Ref = 5,    // block references (Free, ReallocOf), free function bytes
  Stack = 6,  // backtraces: prefix and frame counts, codewords, literals, prediction counts
  Misc = 7,   // everything else: alloc func, alignment, n_samples, thread ids, Ext fields
  Count = 8,
};

// Version 5's lanes (docs/FORMAT.md §5.8): in a column chunk the streams below
// have one sub-stream per lane, a lane per thread in the chunk's order of
// appearance up to kMaxLanes (later threads share the last one), so that zstd
// sees each thread's fields together instead of interleaved in ticket order.
// The others stay shared: splitting them measured no gain (§9, "Version 5").
inline constexpr unsigned kMaxLanes = 8;
inline constexpr unsigned kLaneBits = 3;  // the order stream's lane field
static_assert(kMaxLanes == 1u << kLaneBits);
inline constexpr bool laned(Stream s) {
  return s == Stream::Head || s == Stream::Word || s == Stream::Size || s == Stream::Ref;
}
inline constexpr uint8_t kChunkZstd = 1;  // flags bit 0: payload is zstd-compressed: one frame
// Bit 1, with bit 0, on events chunks only (docs/FORMAT.md §3): the payload is
// the next piece of the file's events zstd stream, ended at a flush, so it
// inflates to exactly raw_len bytes given every piece before it since the
// stream's start; bit 2 marks that start (the reader begins a new stream). A
// stream's frames span chunks, so each chunk sealed early (the recorder cuts
// one every few tens of milliseconds for a follower) keeps the compression of
// one long frame.
inline constexpr uint8_t kChunkZstdStream = 2;
inline constexpr uint8_t kChunkStreamStart = 4;

// The header's mode byte (docs/FORMAT.md §4): Mode, except that Mode::All
// without per-event addresses is written as 2, so that a reader which predates
// that form refuses it instead of misreading its address-form bits.
inline constexpr uint8_t kHeaderModeSampled = 0;
inline constexpr uint8_t kHeaderModeAll = 1;
inline constexpr uint8_t kHeaderModeAllNoAddresses = 2;

// Event times are encoded in ticks of the header's time unit, a whole number of
// microseconds (version 1 traces: always 1 µs). The encoder writes
// floor(t_ns / 1000 / unit); the reader delivers the tick's start, ticks x unit
// x 1000 ns. The encoder takes powers of two only (a shift, not a division, per
// event); readers accept any unit up to kMaxTimeUnitUs.
inline constexpr uint64_t kTimeUnitNs = 1000;  // ns per µs, the unit of the units
inline constexpr uint32_t kMaxTimeUnitUs = 1u << 20;  // ~1 s per tick

// Event header byte:  7..5 code | 4..0 argument.
//   Timed events:  argument = more:1 | dt_low:4; if `more`, varint(dt >> 4) follows.
//   ThreadSwitch:  argument = thread id if < 31, else 31 and varint(thread) follows.
enum class Code : uint8_t {
  AllocCached = 0,   // backtrace from the backtrace cache: u16 slot word, fields
  Alloc = 1,         // explicit backtrace: u8 flags, fields, backtrace
  Free = 2,          // varint block reference (kRefBits) | func changed; [u8 func]
  ReallocOf = 3,     // varint block reference of the old block; the next event is its Alloc
  ThreadSwitch = 4,  // later Alloc/Free/ReallocOf events belong to this thread
  Ext = 5,           // u8 ExtType, then the rare event's fields
  AllocCachedX = 6,  // AllocCached whose function or alignment changed: u16 word, u8 flags >> 4
};
inline constexpr unsigned kCodeShift = 5;
inline constexpr unsigned kDtInlineBits = 4;
inline constexpr uint8_t kDtMore = 1u << kDtInlineBits;
inline constexpr uint8_t kThreadEscape = 31;

enum class ExtType : uint8_t {
  ThreadStart = 1,   // varint thread, varint os_tid
  ThreadName = 2,    // varint thread, string
  ThreadEnd = 3,     // varint thread
  ModuleLoad = 4,    // varint start, varint (end - start), varint load_bias, string path,
                     // u8 n + n bytes build id (n <= 64)
  ModuleUnload = 5,  // varint start
  Rss = 6,           // varint rss bytes
  Marker = 7,        // varint thread, string
  CallTotals = 8,    // varint n (<= kFuncCount), n x (varint calls, varint bytes)
  TraceEnd = 9,      // u8 EndReason
  // 10-15: the statistical-profiling API's run-time changes (api engineer's range).
  RateChange = 10,   // varint thread, varint bytes_per_sample (1 .. kMaxChangedRate)
  DepthChange = 11,  // varint thread, varint depth (<= kMaxFrames)
};
// memloupe_set_rate's largest mean: the analysis keeps a block's mean in 32 bits.
inline constexpr uint64_t kMaxChangedRate = UINT32_MAX;

// Alloc field flags: a set bit means the field is written; a clear bit means it
// is implied (size, func and alignment: the same as the last alloc with this
// cached backtrace; for an explicit Alloc, func as the previous alloc and
// alignment 0; n_samples: 1). Fields follow in this order: size, func, alignment,
// n_samples, address, [backtrace].
//   AllocCached word (u16):  15..4 backtrace-cache slot | 3..2 address form | 1 samples | 0 size
//   AllocCachedX: that word, then a byte holding flags >> 4 (bit 0 func, bit 1 align)
//   Alloc flags byte:        5 align | 4 func | 3..2 address form | 1 samples | 0 (zero:
//                            the size is always written)
inline constexpr uint8_t kHasSize = 1u << 0;
inline constexpr uint8_t kHasSamples = 1u << 1;
inline constexpr unsigned kAddrShift = 2;  // 2 bits, Mode::All with addresses only (else 0)
inline constexpr uint8_t kHasFunc = 1u << 4;
inline constexpr uint8_t kHasAlign = 1u << 5;
inline constexpr unsigned kSlotShift = 4;
enum class AddrForm : uint8_t {
  Freed = 0,      // the block this thread freed last in the size class (history.h)
  FreedNth = 1,   // varint k - 1: the k-th (k >= 1) most recent such block
  NearClass = 2,  // zigzag varint delta from the last address allocated in the size class
  NearCarve = 3,  // zigzag varint delta from where this thread's previous allocation ended
};

// A block reference (Free: shifted left 1 more, bit 0 = func changed): n << 3 | kind.
//   kind 0: the (n+1)-th live allocation counting down from the newest, among
//           the last kRecentAllocs allocations
//   kind 1: the allocation n before the newest (relative id), live or not
//   kind 2 + 2j / 3 + 2j (j < kLandmarks): the (n+1)-th live allocation after /
//           before the block this thread freed j frees ago ("landmark" j), at
//           most kLandmarkSpan ids away from it, both among the last
//           kLiveWindow allocations
// Versions 1-3: n << 2 | kind, kinds 0 and 1 as above, 2 and 3 landmark 0's,
// and kinds 0, 2, 3 only reach the last kRecentAllocs allocations (history.h).
inline constexpr unsigned kRefBits = 3;
inline constexpr unsigned kRefBitsV3 = 2;
inline constexpr unsigned kLandmarks = 3;
inline constexpr unsigned kLandmarkSpan = 4096;
// Allocations whose liveness both sides keep, a bit each (128 KiB): how far back
// a landmark reaches. A hash table's entries replaced in turn are freed
// thousands of allocations after they were made, one after the other.
inline constexpr uint64_t kLiveWindow = uint64_t{1} << 20;

// Strings: varint length (<= kMaxString) then the bytes.
inline constexpr uint32_t kMaxString = 4096;
inline constexpr uint32_t kMaxBuildId = 64;

// Backtraces.
inline constexpr unsigned kMaxFrames = 256;
inline constexpr unsigned kFrameCacheBits = 14;
inline constexpr unsigned kFrameCacheSize = 1u << kFrameCacheBits;
inline constexpr unsigned kMaxPredictions = 255;
inline constexpr unsigned kBtCacheBits = 12;
inline constexpr unsigned kBtCacheSize = 1u << kBtCacheBits;
// Recent allocations remembered by both sides, to predict free funcs and addresses.
inline constexpr unsigned kRecentAllocs = 4096;

}  // namespace memloupe::format
