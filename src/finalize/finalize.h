// Finalising a trace: from the recorder's raw output to the self-contained
// file every other command reads.
//
//   raw:    prologue | header | events* (uncompressed, maybe cut short)
//   final:  prologue | header | events* (merged, zstd) | symbols* | [index]
//
// The symbols section maps every distinct return address of every backtrace
// to its inlined frames. One address has one entry: it is resolved against
// the module that was mapped over it when a backtrace first held it (a later
// dlopen reusing the range would give the same number another meaning; the
// first meaning wins, and such reuse within one trace is rare).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "format/events.h"
#include "format/expected.h"
#include "format/wire.h"
#include "reader/reader.h"
#include "symbolize/symbolizer.h"

namespace memloupe::finalize {

// Work that rides on the finaliser's one read of the events, for the layers
// above it (the CLI builds the analysis index with one; this library knows
// nothing of the analysis). The calls come one at a time, each finished before
// the next starts, in this order: begin, every event (with rest_at_once
// somewhere among them), events_over, index.
// event() runs on the compaction's thread when the collection shares its read
// (a raw trace), the others on the thread that called finalize_trace.
class FinalizeTap {
 public:
  virtual ~FinalizeTap() = default;
  virtual void begin(const format::TraceInfo& info) = 0;
  virtual void event(const format::Event& event) = 0;  // every event but SymbolDefs
  // event(), with the reader's key of an Alloc's backtrace (reader/reader.h,
  // BacktraceKey) for a tap that interns backtraces; the finaliser calls this.
  virtual void keyed_event(const format::Event& event, const reader::BacktraceKey& key) {
    (void)key;
    this->event(event);
  }
  // keyed_event() of an Alloc and of a Free (nearly every event is one), which
  // the finaliser has told from the other kinds already: a tap that takes
  // them apart need not test the event's kind again (nor pass the variant
  // on, to be tested again at each level).
  virtual void alloc_event(const format::Event& event, const format::Alloc& alloc,
                           const reader::BacktraceKey& key) {
    (void)alloc;
    keyed_event(event, key);
  }
  virtual void free_event(const format::Event& event, const format::Free& free) {
    (void)free;
    keyed_event(event, {});
  }
  // The rest of the events is there to be read at once (the program has
  // exited, or the file was finished before the read began): no program
  // competes for the CPUs any more, so the tap may spread its work over more
  // threads. Called on the reading thread, between two events.
  virtual void rest_at_once() {}
  // The read is over; runs while the compaction and the symbolisation finish on
  // other threads. Not called when the read stopped at damage (no index is
  // written then).
  virtual void events_over() = 0;
  // The finished trace (prologue through symbols); returns the analysis index
  // to append (in as many chunks as its size needs), or nothing. Not called for a damaged input.
  virtual std::optional<std::vector<uint8_t>> index(std::span<const uint8_t> trace) = 0;
  // After events_over(): calls fn(allocation id, requested size, stack,
  // backtrace) for each block still live when the events ended, as its Alloc
  // gave them, if the tap kept them (true); a followed read's snapshots' annex
  // is then made without reading the events again. `stack` numbers the tap's
  // table of stacks: one number per distinct backtrace, the same span for
  // each of its blocks, valid until the tap is destroyed.
  using LiveBlockFn = std::function<void(uint64_t, uint64_t, uint32_t, std::span<const uint64_t>)>;
  virtual bool live_blocks(const LiveBlockFn&) const { return false; }
};

// More chunks derived from the binaries, appended behind the symbols and before
// the index (the CLI adds the types table of src/types/ this way; this library
// knows nothing of it). A trace whose symbols are replaced loses such chunks
// (format::ChunkType::Types) with them.
class FinalizeAddon {
 public:
  virtual ~FinalizeAddon() = default;
  // Every Alloc of pass 1, one call at a time, on the thread that reads the
  // events; all calls are over before chunks() starts. `key`: the reader's
  // (reader::BacktraceKey; its addon_memo is the addon's), or none.
  virtual void alloc(const format::Alloc& alloc, const reader::BacktraceKey& key) = 0;
  // After the symbolisation, on its thread, with its open files and the
  // addresses it resolved: the chunks to append (type, raw payload).
  virtual std::vector<std::pair<format::ChunkType, std::vector<uint8_t>>> chunks(
      symbolize::Symbolizer& symbolizer, const symbolize::ModuleMap& modules, std::span<const symbolize::AddressInModule> addresses) = 0;
};

struct FinalizeOptions {
  // A trace that already has a symbols section is left alone unless this is
  // set; then its symbols are replaced.
  bool resymbolize = false;
  // false: keep the events and the existing symbols, only compact (no libdw).
  bool symbolize = true;
  int zstd_level = 6;
  symbolize::SymbolizerOptions symbolizer;
  // Optional; must outlive the call. Any index chunk the input had is dropped
  // either way (it described the events before this rewrite).
  FinalizeTap* tap = nullptr;
  // Optional; must outlive the call. Only runs when symbolising.
  FinalizeAddon* addon = nullptr;
  // The process exits once the file is written (`memloupe run`): what the
  // finalise built is left to the OS (kept_until_exit.h), not freed.
  bool keep_until_exit = false;
};

struct FinalizeStats {
  bool already_symbolized = false;  // nothing was read or written (see FinalizeOptions)
  uint64_t events = 0;              // events in the output
  uint64_t output_bytes = 0;
  uint64_t addresses = 0;           // distinct return addresses in backtraces
  uint64_t symbolized = 0;          // of which at least one frame is known
  uint64_t modules = 0;             // module loads in the trace
  double symbolize_seconds = 0;
  uint64_t index_bytes = 0;         // the analysis index chunk (0: none written)
  uint64_t addon_bytes = 0;         // the addon's chunks, as stored
  double addon_seconds = 0;         // time in FinalizeAddon::chunks
  // The input was cut short or damaged here; everything before it was kept.
  std::optional<Error> damage;
};

struct FollowedRead;  // follow.h

// Finalises `input` into `output` (which may be the same path: the file is
// replaced atomically, or, when every byte of it stays (events the recorder
// wrote in their final form), appended to (AppendedFile); a failure leaves the
// input as it was either way). `followed`:
// the read of the events a TraceFollower did while they were written, with
// `options`' tap and addon (begun and fed); the events are then not read here.
Expected<FinalizeStats> finalize_trace(const std::string& input, const std::string& output,
                                       const FinalizeOptions& options, FollowedRead* followed = nullptr);

}  // namespace memloupe::finalize
