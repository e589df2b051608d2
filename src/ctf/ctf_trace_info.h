// The first packet of a memtrace CTF trace: exactly one trace_info event.
//
//   f64 sample_rate (per word) | u8 word_size (bits) | str executable | str host |
//   str ocaml_runtime_params | u64 pid | str context ("" = none)
#pragma once

#include <cstdint>
#include <span>

#include "ctf/ctf_reader.h"
#include "ctf/ctf_wire.h"
#include "format/events.h"
#include "format/expected.h"

namespace memloupe::reader::ctf {

struct TraceStart {
  format::TraceInfo info;
  CtfDetails details;
  uint64_t data_offset = 0;  // where the packet after the trace-info packet starts
};

// Parses and checks the trace-info packet at the start of `file`.
Expected<TraceStart> parse_trace_start(std::span<const uint8_t> file);

// The event header's 25-bit timestamp, widened relative to the packet start.
constexpr uint64_t event_time(uint32_t header, uint64_t packet_begin) {
  uint64_t low = header & kTimeMask;
  if (low < (packet_begin & kTimeMask)) low += uint64_t{1} << kTimeBits;  // wrapped
  return (packet_begin & ~kTimeMask) + low;
}

}  // namespace memloupe::reader::ctf
