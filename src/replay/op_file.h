// The prepared op file: what `memloupe replay` hands to memloupe-replayer.
//
// The CLI decodes an `--all` trace once (prepare.h) into one stream of fixed
// 16-byte ops per recorded thread, so the timed replay does no decoding. The
// file never leaves the machine (a memfd passed to the child), so it is in host
// byte order and has no checksums; the replayer still checks every offset,
// count, slot and thread index against the file before it runs.
//
//   OpFileHeader | OpThread[threads] | ops of thread 0 | ops of thread 1 | ...
//
// Op (16 bytes):
//   0 u8 OpKind   1 u8 format::Func   2 u8 log2(alignment)   3 u8 flags
//   4 u32 slot (Wait: the thread waited for; Probe: the probe's index)
//   8 u64 size (Wait: the progress count waited for; Free: the block's size,
//          for sized deletes)
//
// Cross-thread order (docs/REPLAY.md § Threads): an op another thread must wait
// for carries kPublish; after running it, its thread stores (its index + 1) in
// its progress word. A Wait op blocks until that thread's progress reaches
// `size`. Only the ops something waits for publish, so the others cost no
// shared store.
//
// This header is shared by both sides and includes nothing of the project's, so
// the replayer links nothing of ours.
#pragma once

#include <cstdint>

namespace memloupe::replay {

inline constexpr char kOpFileMagic[8] = {'M', 'L', 'R', 'E', 'P', 'L', 'A', 'Y'};
inline constexpr uint32_t kOpFileVersion = 1;

enum class OpKind : uint8_t {
  Alloc = 0,    // func allocates `size` bytes (alignment 1 << align_log2 where it takes one) into `slot`
  Free = 1,     // func frees the block in `slot` (sized forms pass `size`, aligned forms the alignment)
  Realloc = 2,  // func reallocates the block in `slot` to `size`; the result stays in `slot`
  Wait = 3,     // wait until thread `slot` has published progress >= `size`
  Probe = 4,    // read the replayer's RSS into probe `slot` (where the trace has an RSS sample)
};

inline constexpr uint8_t kPublish = 1u << 0;

struct Op {
  OpKind kind;
  uint8_t func;
  uint8_t align_log2;
  uint8_t flags;
  uint32_t slot;
  uint64_t size;
};
static_assert(sizeof(Op) == 16);

struct OpThread {
  uint64_t first_op;  // index into the ops that follow the thread table
  uint64_t ops;       // < 2^32: progress words are 32-bit futex words
};
static_assert(sizeof(OpThread) == 16);

struct OpFileHeader {
  char magic[8];
  uint32_t version;
  uint32_t threads;
  uint64_t slots;        // blocks the replayer's slot table must hold
  uint64_t total_ops;    // ops of all threads, Waits included
  uint64_t alloc_calls;  // Alloc + Realloc ops
  uint64_t free_calls;   // Free ops
  uint64_t probes;       // Probe ops (their slots are 0 .. probes - 1)
};
static_assert(sizeof(OpFileHeader) == 56);

// Limits the replayer checks before mapping anything in proportion to them.
inline constexpr uint32_t kMaxThreads = 4096;
inline constexpr uint64_t kMaxOpsPerThread = UINT32_MAX - 1;
inline constexpr uint64_t kMaxProbes = 1u << 20;

}  // namespace memloupe::replay
