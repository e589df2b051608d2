// Encoder: turns events into the compact chunked byte stream of docs/FORMAT.md.
//
// Used from inside malloc by the recorder, so it must not allocate, throw, take
// locks or make system calls: all state lives in fixed arrays inside the object
// (place it in static storage or an mmap'd region), and finished chunks go to a
// ChunkSink (chunk.h). The state is a member (encoder_state.h) rather than bytes
// behind the class, so that a new encoder is constant-initialised to all zero
// bytes: one in static storage costs no start-up work. The caller serialises calls (the recorder holds its trace lock);
// one Encoder produces one totally ordered event stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "format/chunk.h"
#include "format/encoder_state.h"
#include "format/events.h"
#include "format/shared_frames.h"

namespace memloupe::format {

// The header fields, as views, so the recorder can fill them without a heap.
struct HeaderFields {
  Mode mode = Mode::Sampled;
  uint64_t bytes_per_sample = 0;
  uint32_t pid = 0;
  uint64_t start_wall_ns = 0;
  uint64_t start_mono_ns = 0;
  std::string_view host;
  std::string_view executable;
  std::string_view argv_nul_separated;  // as /proc/self/cmdline: "a\0b\0c\0"
  bool addresses = true;  // Mode::All: whether Alloc events carry addresses (as the encoder's)
  uint32_t time_unit_us = 1;  // µs per tick of the event times; must match EncoderOptions's
};

// Writes the file prologue (magic, version) and the header chunk into `out`.
// Returns the bytes written, or 0 if `out` is too small (kMaxFileHeader is enough
// for any header whose strings total at most 8 KiB; longer strings are cut).
inline constexpr size_t kMaxFileHeader = 16 * 1024;
size_t encode_file_header(const HeaderFields& fields, std::span<uint8_t> out) noexcept;

// One allocation as the recorder sees it.
struct AllocRecord {
  ThreadId thread;
  uint64_t time_ns = 0;
  uint64_t size = 0;
  uint64_t address = 0;  // written only in Mode::All with addresses
  uint32_t alignment = 0;
  uint32_t n_samples = 1;
  Func func = Func::Malloc;
  std::span<const uint64_t> backtrace;  // innermost first; frames past kMaxFrames are dropped
  SharedPrefix prefix;  // optional: what the caller knows of the outer frames (shared_frames.h)
};

// How the events are written. The defaults are the original form (row chunks,
// addresses in Mode::All); the recorder writes columns, and addresses only on
// request.
struct EncoderOptions {
  bool addresses = true;  // Mode::All only; must match HeaderFields::addresses
  // ChunkType::EventsColumns (docs/FORMAT.md §5.8) instead of ChunkType::Events:
  // what the finaliser's compaction makes of the rows, written directly.
  bool columns = false;
  // µs per tick of the event times (docs/FORMAT.md §5.2): a power of two from 1
  // to kMaxTimeUnitUs (others are rounded down to one); must match
  // HeaderFields::time_unit_us.
  uint32_t time_unit_us = 1;
};

// `us` rounded down to a power of two within [1, kMaxTimeUnitUs]: the units the
// encoder writes (a shift per event, not a division).
uint32_t encodable_time_unit(uint64_t us) noexcept;

class Encoder {
 public:
  using Options = EncoderOptions;
  static constexpr size_t kMaxFrames = 256;
  // The largest chunk (header and payload) the encoder hands its sink.
  static constexpr size_t kMaxChunk = encoder_detail::kColumnsChunk;
  static_assert(kMaxChunk >= kChunkHeaderSize + kChunkPayload);

  // A new encoder without a sink; start() gives it one. Every table starts at
  // zero, so this writes nothing the zero-initialisation of static storage has
  // not (the recorder's encoder lives there: 0.5 MB it need not clear).
  constexpr Encoder() noexcept = default;
  // `sink` must outlive the encoder. Times passed to the encoder should be
  // non-decreasing; an earlier time is clamped to the previous one (threads read
  // the clock before taking the recorder's lock, so small inversions happen).
  Encoder(ChunkSink& sink, Mode mode, Options options = {}) noexcept { start(sink, mode, options); }
  Encoder(const Encoder&) = delete;
  Encoder& operator=(const Encoder&) = delete;

  // Binds a new (or reset) encoder to its sink, before its first event.
  // Without addresses the encoder writes no address fields and skips their
  // prediction.
  void start(ChunkSink& sink, Mode mode, Options options = {}) noexcept;
  // Back to the state of a new encoder, without a sink (for a fresh trace, as a
  // fork child's: the whole state is cleared, which costs what it is worth).
  void reset() noexcept;

  // Each returns the id the trace gives the allocation.
  AllocId alloc(const AllocRecord& record) noexcept;
  // realloc of a traced block: ends `old` and starts a new allocation, linked.
  AllocId realloc(AllocId old, const AllocRecord& record) noexcept;
  void free(AllocId id, ThreadId thread, uint64_t time_ns, Func func) noexcept;

  void thread_start(ThreadId thread, uint64_t time_ns, uint32_t os_tid) noexcept;
  void thread_name(ThreadId thread, uint64_t time_ns, std::string_view name) noexcept;
  void thread_end(ThreadId thread, uint64_t time_ns) noexcept;
  void module_load(const ModuleLoad& module) noexcept;
  void module_unload(uint64_t time_ns, uint64_t start) noexcept;
  void rss(uint64_t time_ns, uint64_t rss_bytes) noexcept;
  void marker(ThreadId thread, uint64_t time_ns, std::string_view name) noexcept;
  void call_totals(const CallTotals& totals) noexcept;
  void trace_end(uint64_t time_ns, EndReason reason) noexcept;
  void rate_change(ThreadId thread, uint64_t time_ns, uint64_t bytes_per_sample) noexcept;
  void depth_change(ThreadId thread, uint64_t time_ns, uint32_t depth) noexcept;

  // Seals the current chunk (if it holds any event) and hands it to the sink.
  void flush() noexcept;
  // The open chunk (none: 0 and 0): its events' bytes so far, and the trace
  // time it starts at (ns, in whole ticks: that of the event before it, 0 for
  // the first chunk), for a caller that also cuts chunks by time.
  size_t open_bytes() const noexcept;
  uint64_t open_since_ns() const noexcept;

  AllocId next_id() const noexcept;
  uint64_t bytes_written() const noexcept;  // all chunks handed to the sink so far

 private:
  using State = encoder_detail::State;
  State state_;
  encoder_detail::Buffers buffers_;
  State& s() noexcept { return state_; }
  const State& s() const noexcept { return state_; }
};

}  // namespace memloupe::format
