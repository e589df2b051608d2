// EventDecoder: the rare events (code Ext), one ExtType byte after the header.
#include <string>

#include "reader/event_decoder.h"

namespace memloupe::reader {

using format::ExtType;
using S = format::Stream;

// The type byte is in the Head stream, every field in Misc.
template <class In>
std::optional<Error> EventDecoder::ext(In& in, uint8_t arg) {
  uint64_t t;
  if (auto e = timed(in, arg, t)) return e;
  uint8_t type;
  const size_t type_at = in.pos(S::Head);
  if (!in.u8(S::Head, type)) return in.expected(S::Head, "an extended event type (u8)");
  auto thread = [&](format::ThreadId& id) { return in.varint_max(S::Misc, id.value, UINT32_MAX); };
  const char* const kThread = "a thread id (varint, 32 bits)";
  const std::string kString = "a string (varint length <= " + std::to_string(format::kMaxString) +
                              ", then the bytes)";
  switch (static_cast<ExtType>(type)) {
    case ExtType::ThreadStart: {
      format::ThreadStart e{.time_ns = t};
      if (!thread(e.thread)) return in.expected(S::Misc, kThread);
      if (!in.varint_max(S::Misc, e.os_tid, UINT32_MAX)) return in.expected(S::Misc, "an OS thread id (varint)");
      event_ = e;
      break;
    }
    case ExtType::ThreadName: {
      format::ThreadName e{.time_ns = t};
      if (!thread(e.thread)) return in.expected(S::Misc, kThread);
      if (!in.string(S::Misc, e.name, format::kMaxString)) return in.expected(S::Misc, kString);
      event_ = e;
      break;
    }
    case ExtType::ThreadEnd: {
      format::ThreadEnd e{.time_ns = t};
      if (!thread(e.thread)) return in.expected(S::Misc, kThread);
      event_ = e;
      break;
    }
    case ExtType::ModuleLoad: {
      format::ModuleLoad e{.time_ns = t};
      uint64_t len;
      if (!in.varint(S::Misc, e.start)) return in.expected(S::Misc, "a module start address (varint)");
      if (!in.varint_max(S::Misc, len, ~uint64_t{0} - e.start))
        return in.expected(S::Misc, "a module length (varint) that does not wrap");
      e.end = e.start + len;
      if (!in.varint(S::Misc, e.load_bias)) return in.expected(S::Misc, "a load bias (varint)");
      if (!in.string(S::Misc, e.path, format::kMaxString)) return in.expected(S::Misc, kString);
      uint8_t n;
      std::span<const uint8_t> id;
      if (!in.u8(S::Misc, n) || n > format::kMaxBuildId || !in.bytes(S::Misc, n, id))
        return in.expected(S::Misc, "a build id (u8 length <= 64, then the bytes)");
      e.build_id = id;
      event_ = e;
      break;
    }
    case ExtType::ModuleUnload: {
      format::ModuleUnload e{.time_ns = t};
      if (!in.varint(S::Misc, e.start)) return in.expected(S::Misc, "a module start address (varint)");
      event_ = e;
      break;
    }
    case ExtType::Rss: {
      format::RssSample e{.time_ns = t};
      if (!in.varint(S::Misc, e.rss_bytes)) return in.expected(S::Misc, "an RSS size (varint)");
      event_ = e;
      break;
    }
    case ExtType::Marker: {
      format::Marker e{.time_ns = t};
      if (!thread(e.thread)) return in.expected(S::Misc, kThread);
      if (!in.string(S::Misc, e.name, format::kMaxString)) return in.expected(S::Misc, kString);
      event_ = e;
      break;
    }
    case ExtType::CallTotals: {
      format::CallTotals e{.time_ns = t};
      unsigned n;
      if (!in.varint_max(S::Misc, n, format::kFuncCount))
        return in.expected(S::Misc, "a function count (at most " + std::to_string(format::kFuncCount) + ")");
      for (unsigned i = 0; i < n; ++i)
        if (!in.varint(S::Misc, e.totals[i].calls) || !in.varint(S::Misc, e.totals[i].bytes))
          return in.expected(S::Misc, "a call count and a byte count (varints)");
      event_ = e;
      break;
    }
    case ExtType::TraceEnd: {
      format::TraceEnd e{.time_ns = t};
      uint8_t r;
      if (!in.u8(S::Misc, r) || r > static_cast<uint8_t>(format::EndReason::Exec))
        return in.expected(S::Misc, "an end reason (0-3)");
      e.reason = static_cast<format::EndReason>(r);
      event_ = e;
      break;
    }
    case ExtType::RateChange: {
      format::RateChange e{.time_ns = t};
      if (!thread(e.thread)) return in.expected(S::Misc, kThread);
      if (!in.varint_max(S::Misc, e.bytes_per_sample, format::kMaxChangedRate) || e.bytes_per_sample == 0)
        return in.expected(S::Misc, "a mean of bytes between samples (varint, 1 to " +
                                        std::to_string(format::kMaxChangedRate) + ")");
      rate_ = static_cast<uint32_t>(e.bytes_per_sample);
      event_ = e;
      break;
    }
    case ExtType::DepthChange: {
      format::DepthChange e{.time_ns = t};
      if (!thread(e.thread)) return in.expected(S::Misc, kThread);
      if (!in.varint_max(S::Misc, e.depth, format::kMaxFrames))
        return in.expected(S::Misc, "a backtrace depth (varint, at most " + std::to_string(format::kMaxFrames) + ")");
      event_ = e;
      break;
    }
    default:
      return in.expected_at(S::Head, type_at, "an extended event type (1-11), found " + std::to_string(type));
  }
  return std::nullopt;
}

template std::optional<Error> EventDecoder::ext(Streams&, uint8_t);
template std::optional<Error> EventDecoder::ext(TappedStreams&, uint8_t);

}  // namespace memloupe::reader
