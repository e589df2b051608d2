// Writes the symbols section: for each return address, its inlined frames
// (innermost first), as one or more symbols chunks. Used by the finaliser
// outside the traced process, so it may use the heap.
//
// Entry:   varint zigzag(address - previous address in this chunk) | u8 n | n x frame
// Frame:   48-bit word, written as u32 (low) then u16 (high):
//
//   47          34 33                    10 9      5 4      0
//  +--------------+------------------------+--------+--------+
//  |  column:14   |        line:24         | func:5 | file:5 |
//  +--------------+------------------------+--------+--------+
//
// then the file name if its code is 31, then the function name if its code is 31
// (strings: varint length, bytes). Codes come from move-to-front lists: one of
// files, and per file entry one of function names (memtrace's location codec).
// Values above a field's maximum are stored as the maximum. Each chunk starts
// with empty lists and address base 0, so chunks decode independently.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "format/events.h"
#include "format/mtf.h"

namespace memloupe::format {

inline constexpr uint32_t kMaxSymbolLine = (1u << 24) - 1;
inline constexpr uint32_t kMaxSymbolColumn = (1u << 14) - 1;
inline constexpr unsigned kMaxSymbolFrames = 255;

class SymbolsEncoder {
 public:
  explicit SymbolsEncoder(size_t max_chunk_payload = 1u << 20);

  // Adds one address (any order; ascending order encodes smallest). Frames past
  // kMaxSymbolFrames are dropped.
  void add(uint64_t address, std::span<const SymbolFrame> frames);
  // Appends the finished symbols chunk(s), uncompressed, to `out`.
  void finish(std::vector<uint8_t>& out);
  // Or: the finished chunks' payloads, to frame (and compress) elsewhere.
  std::vector<std::vector<uint8_t>> take_payloads();

 private:
  struct FileEntry {
    std::string name;
    MoveToFront<std::string> functions;
  };
  void start_chunk();
  void put_string(std::string_view s);

  size_t max_payload_;
  std::vector<std::vector<uint8_t>> done_;
  std::vector<uint8_t> cur_;
  uint64_t prev_address_ = 0;
  MoveToFront<FileEntry> files_;
};

}  // namespace memloupe::format
