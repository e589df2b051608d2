// EventDecoder: the rare events (code Ext), one ExtType byte after the header.
#include <string>

#include "reader/event_decoder.h"

namespace memloupe::reader {

using format::ExtType;

std::optional<Error> EventDecoder::ext(Cursor& c, uint8_t arg) {
  uint64_t t;
  if (!timed(c, arg, t)) return c.expected("a time delta (varint)");
  uint8_t type;
  const size_t type_at = c.pos();
  if (!c.u8(type)) return c.expected("an extended event type (u8)");
  auto thread = [&](format::ThreadId& id) { return c.varint_max(id.value, UINT32_MAX); };
  const char* const kThread = "a thread id (varint, 32 bits)";
  const std::string kString = "a string (varint length <= " + std::to_string(format::kMaxString) +
                              ", then the bytes)";
  switch (static_cast<ExtType>(type)) {
    case ExtType::ThreadStart: {
      format::ThreadStart e{.time_ns = t};
      if (!thread(e.thread)) return c.expected(kThread);
      if (!c.varint_max(e.os_tid, UINT32_MAX)) return c.expected("an OS thread id (varint)");
      event_ = e;
      break;
    }
    case ExtType::ThreadName: {
      format::ThreadName e{.time_ns = t};
      if (!thread(e.thread)) return c.expected(kThread);
      if (!c.string(e.name, format::kMaxString)) return c.expected(kString);
      event_ = e;
      break;
    }
    case ExtType::ThreadEnd: {
      format::ThreadEnd e{.time_ns = t};
      if (!thread(e.thread)) return c.expected(kThread);
      event_ = e;
      break;
    }
    case ExtType::ModuleLoad: {
      format::ModuleLoad e{.time_ns = t};
      uint64_t len;
      if (!c.varint(e.start)) return c.expected("a module start address (varint)");
      if (!c.varint_max(len, ~uint64_t{0} - e.start))
        return c.expected("a module length (varint) that does not wrap");
      e.end = e.start + len;
      if (!c.varint(e.load_bias)) return c.expected("a load bias (varint)");
      if (!c.string(e.path, format::kMaxString)) return c.expected(kString);
      uint8_t n;
      std::span<const uint8_t> id;
      if (!c.u8(n) || n > format::kMaxBuildId || !c.bytes(n, id))
        return c.expected("a build id (u8 length <= 64, then the bytes)");
      e.build_id = id;
      event_ = e;
      break;
    }
    case ExtType::ModuleUnload: {
      format::ModuleUnload e{.time_ns = t};
      if (!c.varint(e.start)) return c.expected("a module start address (varint)");
      event_ = e;
      break;
    }
    case ExtType::Rss: {
      format::RssSample e{.time_ns = t};
      if (!c.varint(e.rss_bytes)) return c.expected("an RSS size (varint)");
      event_ = e;
      break;
    }
    case ExtType::Marker: {
      format::Marker e{.time_ns = t};
      if (!thread(e.thread)) return c.expected(kThread);
      if (!c.string(e.name, format::kMaxString)) return c.expected(kString);
      event_ = e;
      break;
    }
    case ExtType::CallTotals: {
      format::CallTotals e{.time_ns = t};
      unsigned n;
      if (!c.varint_max(n, format::kFuncCount))
        return c.expected("a function count (at most " + std::to_string(format::kFuncCount) + ")");
      for (unsigned i = 0; i < n; ++i)
        if (!c.varint(e.totals[i].calls) || !c.varint(e.totals[i].bytes))
          return c.expected("a call count and a byte count (varints)");
      event_ = e;
      break;
    }
    case ExtType::TraceEnd: {
      format::TraceEnd e{.time_ns = t};
      uint8_t r;
      if (!c.u8(r) || r > static_cast<uint8_t>(format::EndReason::Exec))
        return c.expected("an end reason (0-3)");
      e.reason = static_cast<format::EndReason>(r);
      event_ = e;
      break;
    }
    default:
      return c.expected_at(type_at, "an extended event type (1-9), found " + std::to_string(type));
  }
  return std::nullopt;
}

}  // namespace memloupe::reader
