#include "ctf/ctf_events.h"

#include <string>

namespace memloupe::reader::ctf {

std::optional<AllocFields> parse_alloc(Cursor& in, uint64_t at, unsigned code, uint32_t word_bytes) {
  AllocFields f;
  f.is_short = code != kAlloc;
  int64_t length = static_cast<int64_t>(code) - kShortAllocBase;
  int64_t samples = 1;
  if (!f.is_short) {
    length = in.vint("alloc length");
    samples = in.vint("alloc sample count");
    f.source = in.u8("alloc source");
  }
  const int64_t common = in.vint("alloc common prefix");
  f.ncodes = f.is_short ? in.u8("alloc codeword count") : in.u16("alloc codeword count");
  if (in.failed()) return std::nullopt;
  if (length < 0 || static_cast<uint64_t>(length) > UINT64_MAX / word_bytes) {
    in.fail_at(at, "alloc length " + std::to_string(length) + " out of range");
  } else if (samples < 1 || samples > UINT32_MAX) {
    in.fail_at(at, "alloc sample count " + std::to_string(samples) + " out of range");
  } else if (f.source >= kSourceCount) {
    in.fail_at(at, "alloc source " + std::to_string(f.source) + " is not minor, major or external");
  } else if (common < 0) {
    in.fail_at(at, "alloc common prefix " + std::to_string(common) + " is negative");
  }
  if (in.failed()) return std::nullopt;
  f.length = static_cast<uint64_t>(length);
  f.samples = static_cast<uint32_t>(samples);
  f.common_prefix = static_cast<uint64_t>(common);
  return f;
}

std::optional<int64_t> parse_id_delta(Cursor& in, uint64_t at, bool promote) {
  const int64_t delta = in.vint(promote ? "promote id delta" : "collect id delta");
  if (in.failed()) return std::nullopt;
  if (promote && delta < 0) {
    in.fail_at(at, "promote id delta " + std::to_string(delta) + " is negative");
    return std::nullopt;
  }
  return delta;
}

}  // namespace memloupe::reader::ctf
