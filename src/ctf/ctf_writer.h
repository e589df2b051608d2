// Writing memloupe events as a Jane Street memtrace CTF v3 trace, readable by
// memtrace's own reader and memtrace_viewer (and by open_ctf).
//
// Mapping (docs/MEMTRACE.md has the reasoning):
//  - sample_rate = 8 / bytes_per_sample (the per-byte probability times the
//    8-byte word), word_size 64, length = ceil(size / 8) words; so memtrace's
//    "nsamples / rate x 8 bytes" gives memloupe's estimate. An every-call (All)
//    trace is written with rate 1 and nsamples = length, so sizes stay right.
//  - Alloc -> alloc (short form when memtrace allows it; all allocations are
//    written as minor-heap ones, which the short form requires), Free -> collect,
//    Promote -> promote; other events have no memtrace counterpart.
//  - A backtrace address is its own location code; its location list is the
//    address's symbolised frames (outermost inlined first), `??` in <unknown>
//    when the address is not in the symbol table, and written once, in a
//    location packet before the events packet that first uses it.
//  - Timestamps are wall-clock microseconds: start + time_ns / 1000, never
//    decreasing. Everything is one domain (0).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ctf/ctf_backtrace.h"
#include "ctf/ctf_location.h"
#include "ctf/ctf_out.h"
#include "format/events.h"
#include "reader/reader.h"

namespace memloupe::reader {

class CtfWriter {
 public:
  // Receives each finished packet; the bytes are valid during the call only.
  using Sink = std::function<void(std::span<const uint8_t>)>;

  struct Stats {
    uint64_t packets = 0;
    uint64_t bytes = 0;
    uint64_t location_events = 0;
    uint64_t long_allocs = 0;
    uint64_t short_allocs = 0;
    uint64_t promotions = 0;
    uint64_t collections = 0;
    uint64_t unmatched = 0;  // frees/promotions of allocations not written (dropped)
    // What CTF cannot carry, for the exporter to say (docs/MEMTRACE.md):
    uint64_t rounded_sizes = 0;  // sizes not a whole number of 8-byte words (rounded up)
    uint64_t threads = 0;        // distinct threads allocating or freeing (all become one stream)
    uint64_t rss_samples = 0;
    uint64_t markers = 0;
    uint64_t modules = 0;         // module loads (the addresses' frames are kept as locations)
    uint64_t call_totals = 0;     // the exact call counters
    bool end_record = false;      // how the program ended
  };

  // One line per kind of information that was not carried, for stderr; empty
  // when the export is faithful.
  std::vector<std::string> losses() const;

  // Writes the trace-info packet at once. `symbols` is consulted when an address
  // is first written, so it may still be growing (a reader's symbols()).
  CtfWriter(const format::TraceInfo& info, const SymbolTable& symbols, Sink sink);

  // Alloc, Free and Promote are written; other events are ignored.
  void write(const format::Event& event);
  // Writes the pending packets. Call once, after the last event.
  void finish();

  const Stats& stats() const { return stats_; }

 private:
  void alloc(const format::Alloc& a);
  void relative(format::AllocId id, uint64_t time_ns, bool promote);
  // Starts an event at `time_ns`, flushing first when the packet is full or
  // spans too long; returns the event's timestamp (us).
  uint64_t begin_event(uint64_t time_ns, uint8_t code);
  void open_packet(uint64_t now_us);
  void flush();
  void emit(ctf::Out& packet);
  std::vector<ctf::Location> locations_of(uint64_t address) const;

  void note_thread(format::ThreadId thread);

  const SymbolTable& symbols_;
  std::unordered_set<uint32_t> threads_seen_;
  Sink sink_;
  uint32_t pid_ = 0;
  uint64_t start_us_ = 0;
  bool every_call_ = false;

  ctf::BacktraceEncoder backtraces_;
  ctf::LocationEncoder locations_;
  std::unordered_set<uint64_t> located_;  // codes whose location is written or pending
  std::vector<uint64_t> pending_locations_;

  std::unordered_map<uint64_t, uint64_t> live_;  // memloupe AllocId -> memtrace object id
  uint64_t next_object_ = 0;

  ctf::Out body_;  // the open events packet's content
  bool packet_open_ = false;
  bool first_packet_ = true;
  uint64_t packet_begin_us_ = 0;
  uint64_t packet_end_us_ = 0;
  uint64_t packet_first_object_ = 0;
  ctf::BacktraceEncoder::Verifier verifier_;
  uint64_t last_us_ = 0;
  Stats stats_;
};

}  // namespace memloupe::reader
