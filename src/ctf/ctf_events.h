// Parsing the fixed fields of memtrace's data events (the reader then applies
// them to its state). Each parse reads from the cursor, checks the values, and on
// failure leaves the error in the cursor (naming `at`, the event's offset).
//
//   alloc (code 2)        vint length | vint nsamples | u8 source | vint common_prefix | u16 ncodes
//   short alloc (101-116) vint common_prefix | u8 ncodes   (length = code - 100, 1 sample, minor)
//   promote / collect     vint id delta (0 = the packet's latest allocation)
// The alloc's codewords follow (ctf_backtrace.h).
#pragma once

#include <cstdint>
#include <optional>

#include "ctf/ctf_cursor.h"
#include "ctf/ctf_wire.h"

namespace memloupe::reader::ctf {

constexpr bool is_alloc_code(unsigned code) {
  return code == kAlloc || (code > kShortAllocBase && code <= kShortAllocBase + kShortAllocMaxWords);
}

struct AllocFields {
  bool is_short = false;
  uint64_t length = 0;  // words, at most UINT64_MAX / word bytes
  uint32_t samples = 1;
  uint8_t source = kMinor;
  uint64_t common_prefix = 0;
  uint32_t ncodes = 0;
};
std::optional<AllocFields> parse_alloc(Cursor& in, uint64_t at, unsigned code, uint32_t word_bytes);

// A promotion's delta is never negative; a collection's may be (memtrace: a block
// of a terminated domain collected by another).
std::optional<int64_t> parse_id_delta(Cursor& in, uint64_t at, bool promote);

}  // namespace memloupe::reader::ctf
