// The trace's data model: what a trace says, independent of how it is encoded.
//
// The recorder produces these (through the Encoder), the reader delivers them,
// everything downstream consumes them. Views (string_view, span) point into
// storage owned by whoever produced the event and stay valid only until the
// next event is produced.
//
// Conventions, fixed for the whole project:
//  - Times are nanoseconds since the trace started (monotonic clock).
//  - Backtraces are raw return addresses, innermost first: backtrace[0] is the
//    return address into the function that called malloc/new. Symbolise
//    `address - 1` to land inside the call instruction.
//  - Inlined frames of one address (Symbol::frames) are innermost first too; the
//    last one is the real (non-inlined) function containing the address.
//  - AllocId is the allocation's position among all Alloc events of the trace
//    (0-based, in file order). A Free names the AllocId it ends.
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "format/funcs.h"

namespace memloupe::format {

// Strong ids: a ThreadId cannot be passed where an AllocId belongs.
template <class Tag, class Rep>
struct StrongId {
  Rep value{};
  constexpr auto operator<=>(const StrongId&) const = default;
};
using ThreadId = StrongId<struct ThreadTag, uint32_t>;  // 0 = first thread seen
using AllocId = StrongId<struct AllocTag, uint64_t>;

enum class Mode : uint8_t {
  Sampled = 0,  // Poisson sampling per byte, mean `bytes_per_sample`
  All = 1,      // every call (block addresses only if TraceInfo::addresses)
};

// Fixed facts about the traced run; written once in the file header.
struct TraceInfo {
  uint16_t version = 0;
  uint8_t pointer_size = 8;
  Mode mode = Mode::Sampled;
  uint64_t bytes_per_sample = 0;  // mean bytes between samples; 0 when mode == All
  uint32_t pid = 0;
  uint64_t start_wall_ns = 0;     // Unix epoch, CLOCK_REALTIME at start
  uint64_t start_mono_ns = 0;     // CLOCK_MONOTONIC at start (event times are relative to it)
  std::string host;
  std::string executable;
  std::vector<std::string> argv;
  // Set when the trace came from another format (e.g. "memtrace-ctf v2"); empty for native.
  std::string source_format;
  // Mode::All only: Alloc events carry their block's address (header mode byte 1;
  // byte 2 is Mode::All without them, the recorder's default: docs/FORMAT.md §4).
  bool addresses = false;
  // µs per tick of the event times (header field of format version 2; 1 in
  // version 1): every event time is a multiple of it, and a block freed in the
  // tick it was allocated in has lifetime 0 (docs/FORMAT.md §5.2).
  uint32_t time_unit_us = 1;
  uint64_t time_unit_ns() const { return uint64_t{time_unit_us} * 1000; }
};

struct Alloc {
  AllocId id;
  ThreadId thread;
  uint64_t time_ns = 0;
  uint64_t size = 0;
  uint64_t address = 0;     // 0 unless mode == All and the trace has addresses
  uint32_t alignment = 0;   // 0 = the function's default alignment
  uint32_t n_samples = 1;   // sample points that fell in this block (1 in All mode)
  Func func = Func::Malloc;
  std::optional<AllocId> realloc_of;  // set for a realloc that moved/resized a traced block;
                                      // the reader has just delivered the matching Free
  std::span<const uint64_t> backtrace;
  // Mode::Sampled: the mean bytes between samples in force when this block was
  // sampled (the last RateChange before it); 0: the header's bytes_per_sample.
  uint32_t bytes_per_sample = 0;
};

struct Free {
  AllocId id;
  ThreadId thread;
  uint64_t time_ns = 0;
  Func func = Func::Free;
};

struct ThreadStart {
  ThreadId thread;
  uint64_t time_ns = 0;
  uint32_t os_tid = 0;
};
struct ThreadName {
  ThreadId thread;
  uint64_t time_ns = 0;
  std::string_view name;
};
struct ThreadEnd {
  ThreadId thread;
  uint64_t time_ns = 0;
};

struct ModuleLoad {
  uint64_t time_ns = 0;
  uint64_t start = 0;       // lowest mapped address of the module
  uint64_t end = 0;         // one past the highest
  uint64_t load_bias = 0;   // dlpi_addr: runtime address = ELF vaddr + load_bias
  std::string_view path;
  std::span<const uint8_t> build_id;
};
struct ModuleUnload {
  uint64_t time_ns = 0;
  uint64_t start = 0;
};

struct RssSample {
  uint64_t time_ns = 0;
  uint64_t rss_bytes = 0;
};

struct Marker {
  ThreadId thread;
  uint64_t time_ns = 0;
  std::string_view name;
};

// Exact, process-wide, cumulative since start: the last CallTotals in a trace
// holds the totals of the whole run (up to its time).
struct FuncTotal {
  uint64_t calls = 0;
  uint64_t bytes = 0;  // requested bytes (allocating functions only)
};
struct CallTotals {
  uint64_t time_ns = 0;
  FuncTotal totals[kFuncCount];
};

enum class EndReason : uint8_t { Exit = 0, Stopped = 1, Signal = 2, Exec = 3 };
struct TraceEnd {
  uint64_t time_ns = 0;
  EndReason reason = EndReason::Exit;
};

// memloupe_set_rate() / memloupe_set_depth() (the program changed its sampling
// while it ran): every later Alloc is sampled at one sample per
// `bytes_per_sample` bytes on average / recorded with at most `depth` frames.
// `thread` is the thread that made the change (0 if that thread is not in the
// trace). The recorder also brackets one Alloc with a RateChange to the old
// mean and one back when a thread's first sample after a change was drawn at
// the old mean (recorder/event_path.cc, with_mean).
struct RateChange {
  ThreadId thread;
  uint64_t time_ns = 0;
  uint64_t bytes_per_sample = 0;
};
struct DepthChange {
  ThreadId thread;
  uint64_t time_ns = 0;
  uint32_t depth = 0;
};

// Symbols: for one return address, its frames, innermost inlined frame first.
struct SymbolFrame {
  std::string_view function;  // demangled; empty if unknown
  std::string_view file;      // empty if unknown
  uint32_t line = 0;
  uint32_t column = 0;
};
struct SymbolDef {
  uint64_t address = 0;
  std::span<const SymbolFrame> frames;
};

// Memtrace CTF only: an OCaml minor-heap object promoted to the major heap.
struct Promote {
  AllocId id;
  uint64_t time_ns = 0;
};

using Event = std::variant<Alloc, Free, ThreadStart, ThreadName, ThreadEnd, ModuleLoad,
                           ModuleUnload, RssSample, Marker, CallTotals, TraceEnd, SymbolDef,
                           Promote, RateChange, DepthChange>;

}  // namespace memloupe::format
