// memtrace CTF: the wire constants shared by the CTF reader and writer.
//
// A trace is a sequence of packets, all little-endian:
//
//   off  type  field
//     0  u32   magic 0xC1FC1FC1
//     4  u32   packet size in BITS, header included
//     8  u64   timestamp_begin (us since the epoch)
//    16  u64   timestamp_end   (begin <= every event <= end)
//    24  u32   flush_duration  (0)
//    28  u16   version (2 or 3)
//    30  u64   pid
//    38  u16   domain                      (v3 only; v2 headers are 66 bytes)
//  38/40 u16   cache_verify_ix (0xFFFF = none)
//        u16   cache_verify_pred
//        u64   cache_verify_val
//        u64   alloc_id_begin
//        u64   alloc_id_end    (exclusive: begin + number of allocs in the packet)
//
// then events, each starting with a u32 `(code << 25) | (timestamp & 0x1FFFFFF)`.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memloupe::reader::ctf {

inline constexpr uint32_t kMagic = 0xC1FC1FC1;
inline constexpr uint16_t kMinVersion = 2;  // v1 predates the context field
inline constexpr uint16_t kMaxVersion = 3;  // v3 added the domain field
inline constexpr size_t kHeaderSizeV2 = 66;
inline constexpr size_t kHeaderSizeV3 = 68;
inline constexpr size_t kVersionOffset = 28;
constexpr size_t header_size(uint16_t version) {
  return version >= 3 ? kHeaderSizeV3 : kHeaderSizeV2;
}

// memtrace keeps packets at most this big; the writer does too (the reader
// accepts any size the u32 bit count allows).
inline constexpr size_t kMaxPacketBytes = size_t{1} << 15;
// A packet spans at most 30 s, so an event's 25-bit timestamp (33.5 s of
// microseconds) is unambiguous relative to the packet's timestamp_begin.
inline constexpr unsigned kTimeBits = 25;
inline constexpr uint64_t kTimeMask = (uint64_t{1} << kTimeBits) - 1;
inline constexpr uint64_t kMaxPacketSpanUs = 30'000'000;
static_assert(kMaxPacketSpanUs < (uint64_t{1} << kTimeBits));

enum Code : uint8_t {
  kTraceInfo = 0,
  kLocation = 1,
  kAlloc = 2,
  kPromote = 3,
  kCollect = 4,
  // 101..116: short alloc of (code - 100) words, one sample, minor heap.
  kShortAllocBase = 100,
};
inline constexpr uint32_t kShortAllocMaxWords = 16;

// Allocation sources (the long alloc form's u8).
enum Source : uint8_t { kMinor = 0, kMajor = 1, kExternal = 2 };
inline constexpr unsigned kSourceCount = 3;

// The backtrace frame cache: 2^14 slots, each a location code and a predicted
// next slot. A codeword is a u16 `(slot << 2) | tag`.
inline constexpr unsigned kCacheBits = 14;
inline constexpr uint32_t kCacheSize = uint32_t{1} << kCacheBits;
enum Tag : uint16_t { kHit0 = 0, kHit1 = 1, kHitN = 2, kMiss = 3 };
inline constexpr uint16_t kNoVerify = 0xFFFF;
// The writer checks a different cache slot in each events packet.
inline constexpr uint32_t kFirstVerifySlot = 4242;
inline constexpr uint32_t kVerifyStep = 5413;
// memtrace's bound on one backtrace's codewords and one location event's body.
inline constexpr size_t kMaxBacktraceBytes = 4096;
inline constexpr size_t kMaxLocationBytes = 4096;

// Locations: a 48-bit word (u32 low, u16 high) per inlined frame.
//   bits 0-19 line | 20-27 start_char | 28-37 end_char | 38-42 file | 43-47 defname
// A file or defname code of 31 means "not in the move-to-front list": the string
// follows (file first). Codes 0..30 name an entry of the 31-entry list.
inline constexpr unsigned kMtfSize = 31;
inline constexpr uint32_t kMaxLine = 0xFFFFF;
inline constexpr uint32_t kMaxStartChar = 0xFF;
inline constexpr uint32_t kMaxEndChar = 0x3FF;

}  // namespace memloupe::reader::ctf
