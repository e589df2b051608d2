#include "reader/header_decoder.h"

#include <string>

#include "format/wire.h"

namespace memloupe::reader {

// Header chunk payload -> TraceInfo (layout in format/header.cc).
std::optional<Error> parse_header(Cursor c, uint32_t version, format::TraceInfo& info) {
  info.version = static_cast<uint16_t>(version);
  uint8_t ptr, mode;
  if (!c.u8(ptr) || (ptr != 4 && ptr != 8)) return c.expected("a pointer size of 4 or 8");
  info.pointer_size = ptr;
  if (!c.u8(mode) || mode > format::kHeaderModeAllNoAddresses)
    return c.expected("a mode (0 sampled, 1 all, 2 all without addresses)");
  info.mode = mode == format::kHeaderModeSampled ? format::Mode::Sampled : format::Mode::All;
  info.addresses = mode == format::kHeaderModeAll;
  if (!c.varint(info.bytes_per_sample)) return c.expected("bytes per sample (varint)");
  if (!c.varint_max(info.pid, UINT32_MAX)) return c.expected("a pid (varint, 32 bits)");
  if (!c.u64(info.start_wall_ns) || !c.u64(info.start_mono_ns))
    return c.expected("the wall and monotonic start times (u64 each)");
  std::string_view s;
  if (!c.string(s, format::kMaxString)) return c.expected("the host name (string)");
  info.host = s;
  if (!c.string(s, format::kMaxString)) return c.expected("the executable path (string)");
  info.executable = s;
  uint64_t argc;
  if (!c.varint(argc)) return c.expected("an argument count (varint)");
  // Each argument takes at least one byte, so argc is bounded by the payload.
  if (argc > c.remaining()) return c.expected("at most " + std::to_string(c.remaining()) + " arguments");
  for (uint64_t i = 0; i < argc; ++i) {
    if (!c.string(s, format::kMaxString)) return c.expected("an argument (string)");
    info.argv.emplace_back(s);
  }
  info.time_unit_us = 1;  // version 1: µs
  if (version >= 2) {
    uint64_t unit;
    if (!c.varint(unit) || unit == 0 || unit > format::kMaxTimeUnitUs)
      return c.expected("a time unit (varint, 1 to " + std::to_string(format::kMaxTimeUnitUs) + " µs)");
    info.time_unit_us = static_cast<uint32_t>(unit);
  }
  if (!c.at_end()) return c.expected("the end of the header chunk");
  return std::nullopt;
}

}  // namespace memloupe::reader
