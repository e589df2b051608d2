#include "ctf/ctf_trace_info.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "ctf/ctf_cursor.h"
#include "ctf/ctf_packet.h"
#include "ctf/ctf_wire.h"

namespace memloupe::reader::ctf {

Expected<TraceStart> parse_trace_start(std::span<const uint8_t> file) {
  const size_t needed = header_bytes_needed(file, 0);
  if (needed == 0 || file.size() < needed) {
    return Error{"trace ends early at offset " + std::to_string(file.size()) +
                     ": the first packet header is cut off",
                 file.size()};
  }
  Expected<PacketHeader> header = parse_packet_header(file, 0);
  if (!header) return header.error();
  const PacketHeader& h = *header;
  if (h.end() > file.size()) {
    return Error{"trace ends early at offset " + std::to_string(file.size()) +
                     ": the trace-info packet declares " + std::to_string(h.size) + " bytes",
                 file.size()};
  }

  Cursor in(file, h.content_begin(), h.end());
  const uint32_t event = in.u32("trace_info event header");
  const double rate = in.f64("sample rate");
  const uint8_t word_size = in.u8("word size");
  const std::string_view executable = in.str("executable name");
  const std::string_view host = in.str("host name");
  const std::string_view params = in.str("OCaml runtime parameters");
  const uint64_t pid = in.u64("pid");
  const std::string_view context = in.str("context");
  if (in.failed()) return in.error();

  const uint64_t at = h.content_begin();
  auto fail = [](uint64_t offset, const std::string& what) {
    return Error{"at offset " + std::to_string(offset) + ": " + what, offset};
  };
  if (event >> kTimeBits != kTraceInfo) return fail(at, "the first event is not trace_info");
  if (event_time(event, h.time_begin) != h.time_begin) {
    return fail(at, "the trace_info event's time differs from its packet's");
  }
  if (!in.at_end()) {
    return fail(in.offset(), std::to_string(in.remaining()) + " bytes follow trace_info in its packet");
  }
  if (word_size != 32 && word_size != 64) {
    return fail(at + 12, "word size " + std::to_string(word_size) + " is neither 32 nor 64");
  }
  const double word_bytes = word_size / 8.0;
  // bytes per sample = word bytes / per-word rate; it must be a sane positive number.
  if (!(rate > 0) || !std::isfinite(rate) || !(word_bytes / rate < 0x1p62)) {
    return fail(at + 4, "sample rate " + std::to_string(rate) + " is out of range");
  }
  if (h.time_begin > UINT64_MAX / 1000) return fail(8, "start time out of range");

  TraceStart start;
  format::TraceInfo& info = start.info;
  info.version = h.version;
  info.pointer_size = word_size / 8;
  // Every word sampled (rate 1, as memloupe exports an every-call trace, or
  // more) means every allocation is in the trace: counts are exact, not estimates.
  info.mode = rate >= 1 ? format::Mode::All : format::Mode::Sampled;
  info.bytes_per_sample = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(word_bytes / rate)));
  info.pid = pid <= UINT32_MAX ? static_cast<uint32_t>(pid) : 0;
  info.start_wall_ns = h.time_begin * 1000;
  info.start_mono_ns = 0;  // memtrace records wall-clock time only
  info.host = host;
  info.executable = executable;
  info.source_format = "memtrace-ctf v" + std::to_string(h.version);

  CtfDetails& d = start.details;
  d.version = h.version;
  d.sample_rate = rate;
  d.word_size = word_size;
  d.pid = pid;
  d.start_us = h.time_begin;
  d.runtime_params = params;
  d.context = context;
  d.packets = 1;
  start.data_offset = h.end();
  return start;
}

}  // namespace memloupe::reader::ctf
