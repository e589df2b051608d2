// The layout of a heap snapshot in a trace (ChunkType::Snapshot), written by the
// recorder's scan (src/recorder/snapshot/) and read by src/retention/snapshot_load.
//
// A snapshot is a run of Snapshot chunks (a 1 GiB heap does not fit one 16 MiB
// chunk), each holding one or more parts. Every part starts
//   u8 SnapshotPart | varint snapshot number (0, 1, ... in the trace)
// and then:
//   Begin:  varint time_ns | u8 at_exit | string label | varint threads seen
//           | varint threads not stopped (their stacks and registers are missing)
//   Roots:  u32 n, then n x root:
//             u8 RootKind | varint thread+1 (0: a thread the trace never named)
//             | varint os tid | varint address | varint size | varint pc
//           (pc: a stack frame's pc; for a TLS block, the address of its
//           module's first segment, which names the module, and 0 for the
//           thread's descriptor (TLS kind too); 0 otherwise.
//           Registers have address 0 and size = bytes of register values scanned)
//   Blocks: u32 n, then n x block, ascending addresses:
//             varint (address - previous block's address) | varint size | varint alloc id
//   Edges:  u32 n, then n x edge, `from` ascending:
//             varint (from - previous edge's from) | varint (to << 1 | interior)
//             | varint offset, only when `from` is a root: the pointer word's
//               offset in the root (how a module's segment is split into one
//               root per global variable when the snapshot is loaded)
//           from: node number (roots first, then blocks, as retention/heap_graph.h);
//           to: block index. The first edge of a part is relative to 0.
//   End:    varint roots | varint blocks | varint edges (totals, to notice a lost part)
//           | varint bytes scanned | varint ns the other threads were stopped
//             (up to this part; they resume right after it)
//   Names:  u32 n, then n x name of a global variable (or of a section's words
//           no symbol covers), written by the finaliser from the modules'
//           symbol tables so the trace names its roots without the binaries:
//             varint address | varint size | string name | string file | varint line
//           It follows the snapshot's End part, in a chunk of its own, and
//           starts the finaliser's annex: each Names part discards whatever
//           a finaliser wrote for that snapshot before (finalising again
//           appends a new annex), so the last annex is the one that counts.
// The rest of the annex, in chunks after the Names part, so the views need
// no pass over the events (each part may continue in the next chunk; items
// are numbered across parts in their order):
//   Stacks: u32 n, then n x allocation backtrace of a snapshot block (distinct):
//             varint depth (<= 256) | depth x varint return address, innermost first
//   Sites:  u32 n, then n x one per block, in the snapshot's block order:
//             varint stack+1 (0: the trace has no Alloc event for the block)
//             | varint requested size (only when stack+1 > 0)
//   Modules: u32 n, then n x every module load of the trace, in order:
//             varint start | varint end | varint load bias | string path
//             | string build id (raw bytes, <= 64)
//   Threads: u32 n, then n x thread: varint id | varint os tid | string name (its last)
//   Named:  varint stacks | varint sites | varint modules | varint threads
//           (totals: the annex is complete only if they match and sites =
//           the snapshot's blocks; a reader uses an incomplete annex not at
//           all and reads the events instead)
// (n is a fixed u32: the writer patches it when the part is full.)
// Roots are numbered in the order their parts come, blocks likewise. Block sizes
// here are the allocator's usable size (the extent scanned); the loader replaces
// them with the requested size (from the annex's Sites, else from the block's
// Alloc event).
#pragma once

#include <cstdint>

namespace memloupe::format {

enum class SnapshotPart : uint8_t {
  Begin = 0, Roots = 1, Blocks = 2, Edges = 3, End = 4,
  // The finaliser's annex.
  Names = 5, Stacks = 6, Sites = 7, Modules = 8, Threads = 9, Named = 10,
};

// Root kinds on the wire; the same numbering as retention::RootKind.
enum class SnapshotRoot : uint8_t { Global = 0, Stack = 1, Register = 2, Tls = 3 };

// The recorder cuts a part's chunk at about this many payload bytes.
inline constexpr uint32_t kSnapshotChunkPayload = 1u << 20;

}  // namespace memloupe::format
