// memtrace's location codec: the body of a location event.
//
//   u64 code | u8 nlocs | nlocs x (u32 low, u16 high of the 48-bit word in
//   ctf_wire.h, then the file name if its code is 31, then the defname if its
//   code is 31)
//
// File names go through one 31-entry move-to-front list; each file entry owns
// its own 31-entry move-to-front list of defnames. A code's locations are listed
// outermost inlined frame first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "ctf/ctf_cursor.h"
#include "ctf/ctf_out.h"
#include "reader/reader.h"

namespace memloupe::reader::ctf {

struct Location {
  std::string file;
  uint32_t line = 0;
  uint32_t start_char = 0;
  uint32_t end_char = 0;
  std::string defname;
  bool operator==(const Location&) const = default;
};

class LocationDecoder {
 public:
  // Reads one location event body into `code` and `locs`. On failure the cursor
  // holds the error (a truncated field, or a move-to-front code naming an empty
  // slot).
  void decode(Cursor& in, uint64_t& code, std::vector<Location>& locs);

 private:
  struct FileEntry {
    std::string name;
    std::vector<std::string> defnames;  // front = most recent
  };
  std::vector<FileEntry> files_;  // front = most recent, at most kMtfSize
};

class LocationEncoder {
 public:
  // Appends a location event body. A list memtrace cannot carry (more than 255
  // frames, or possibly more than 4 KiB) becomes memtrace's single unknown
  // location; fields too large for their bits are clamped to the maximum.
  void encode(uint64_t code, std::span<const Location> locs, Out& out);

  // memtrace's placeholder: <unknown>:1:1-1 "??".
  static Location unknown();

 private:
  struct FileEntry {
    std::string name;
    std::vector<std::string> defnames;
  };
  std::vector<FileEntry> files_;
};

// The trace-wide table of location codes (memtrace's loc_table) and the same
// information as memloupe symbols: function = defname, file, line, column =
// start_char, innermost inlined frame first (memtrace lists outermost first).
class LocationTable {
 public:
  // Records `locs` for `code` and returns the code's frames, or nullptr if the
  // code was defined before with different locations.
  const std::vector<OwnedFrame>* define(uint64_t code, const std::vector<Location>& locs);
  const SymbolTable& symbols() const { return symbols_; }

 private:
  std::unordered_map<uint64_t, std::vector<Location>> locations_;
  SymbolTable symbols_;
};

}  // namespace memloupe::reader::ctf
