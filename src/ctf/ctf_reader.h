// Reading Jane Street memtrace CTF traces (format versions 2 and 3).
//
// Reader::open recognises the CTF packet magic and hands the bytes to open_ctf.
// The events come out in memloupe's model (src/format/events.h):
//   trace_info      -> TraceInfo (source_format "memtrace-ctf v2" / "v3")
//   location        -> SymbolDef (the code's frames, innermost inlined first),
//                      delivered where it appears, i.e. before the code's first use
//   alloc (long and short forms) -> Alloc (size = words x word size; backtrace
//                      innermost first; the frame "addresses" are location codes)
//   promote / collect -> Promote / Free
// The encoding itself is described in docs/MEMTRACE.md.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "format/expected.h"
#include "reader/bytes.h"
#include "reader/reader.h"

namespace memloupe::reader {

// True if `data` starts like a memtrace CTF trace (the packet magic 0xC1FC1FC1).
bool is_ctf(std::span<const uint8_t> data);

// Reads the trace-info packet and returns a reader positioned after it. Fails if
// the bytes are not CTF, if the version is newer than 3 (or older than 2), or if
// the first packet is damaged.
Expected<std::unique_ptr<Reader>> open_ctf(std::unique_ptr<Bytes> bytes);

// What a CTF trace says beyond memloupe's TraceInfo, and how it was encoded.
struct CtfDetails {
  uint16_t version = 0;
  double sample_rate = 0;  // per word
  uint32_t word_size = 0;  // bits
  uint64_t pid = 0;        // as written (TraceInfo::pid is 32-bit)
  uint64_t start_us = 0;   // wall clock, microseconds since the epoch
  std::string runtime_params;
  std::string context;     // empty = none

  // Counters, as far as the trace has been read.
  uint64_t packets = 0;
  uint64_t skipped_packets = 0;  // another process's packets (after a fork)
  uint64_t location_events = 0;
  uint64_t long_allocs = 0;
  uint64_t short_allocs = 0;
  std::array<uint64_t, 3> allocs_by_source{};  // minor, major, external
  uint64_t promotions = 0;
  uint64_t collections = 0;
  uint64_t backtrace_frames = 0;  // summed over all allocations
};

// The CTF details of `reader`, or nullptr if it does not read a CTF trace.
const CtfDetails* ctf_details(const Reader& reader);

}  // namespace memloupe::reader
