// The prologue and the header chunk (layout in docs/FORMAT.md, "Header chunk"):
//   u8 pointer_size | u8 mode | varint bytes_per_sample | varint pid |
//   u64 start_wall_ns | u64 start_mono_ns | string host | string executable |
//   varint argc | argc x string | varint time unit (µs per tick; version 2)
#include <cstring>

#include "format/chunk.h"
#include "format/encoder.h"
#include "format/varint.h"

namespace memloupe::format {
namespace {

constexpr size_t kMaxHost = 255;
constexpr size_t kArgvBudget = 8192;  // bytes of argv strings, their length prefixes included

}  // namespace

size_t encode_file_header(const HeaderFields& f, std::span<uint8_t> out) noexcept {
  static_assert(kPrologueSize + kChunkHeaderSize + 40 + kMaxHost + kMaxString + kArgvBudget +
                    3 * kMaxVarint <= kMaxFileHeader);  // varints: bytes per sample, pid, time unit
  if (out.size() < kMaxFileHeader) return 0;
  uint8_t* const chunk = out.data() + kPrologueSize;
  uint8_t* const payload = chunk + kChunkHeaderSize;
  uint8_t* p = payload;
  *p++ = static_cast<uint8_t>(sizeof(void*));
  *p++ = f.mode == Mode::Sampled ? kHeaderModeSampled
         : f.addresses            ? kHeaderModeAll
                                  : kHeaderModeAllNoAddresses;
  p = put_varint(p, f.mode == Mode::All ? 0 : f.bytes_per_sample);
  p = put_varint(p, f.pid);
  p = put_u64(p, f.start_wall_ns);
  p = put_u64(p, f.start_mono_ns);
  p = put_string(p, f.host.data(), f.host.size(), kMaxHost);
  p = put_string(p, f.executable.data(), f.executable.size(), kMaxString);

  // argv: NUL-separated (a trailing NUL ends the last argument, as in /proc/self/cmdline).
  std::string_view rest = f.argv_nul_separated;
  uint8_t* argc_at = p;
  p += 3;  // argc as a 3-byte varint (padded form), patched below
  uint32_t argc = 0;
  size_t budget = kArgvBudget;
  while (!rest.empty() && budget > 2) {
    size_t end = rest.find('\0');
    std::string_view arg = rest.substr(0, end);
    size_t n = arg.size() < budget - 2 ? arg.size() : budget - 2;
    n = n < kMaxString ? n : kMaxString;
    p = put_string(p, arg.data(), n, kMaxString);
    budget -= n + varint_size(n);
    ++argc;
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
  }
  // A 3-byte varint holds up to 2^21 - 1 arguments; argv is far below that.
  argc_at[0] = static_cast<uint8_t>(argc | 0x80);
  argc_at[1] = static_cast<uint8_t>((argc >> 7) | 0x80);
  argc_at[2] = static_cast<uint8_t>(argc >> 14);
  p = put_varint(p, encodable_time_unit(f.time_unit_us));

  size_t payload_len = static_cast<size_t>(p - payload);
  write_chunk_header(chunk, ChunkType::Header, 0, {payload, payload_len},
                     static_cast<uint32_t>(payload_len));
  write_prologue(out.data());
  return kPrologueSize + kChunkHeaderSize + payload_len;
}

}  // namespace memloupe::format
