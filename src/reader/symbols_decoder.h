// Decodes one symbols chunk (layout in format/symbols_encoder.h), entry by entry.
// Names are views into the chunk's payload.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "format/events.h"
#include "format/expected.h"
#include "format/mtf.h"
#include "reader/cursor.h"
#include "reader/reader.h"

namespace memloupe::reader {

class SymbolsDecoder {
 public:
  // The next entry, or nullptr at the end of the chunk or on damage (err set).
  const format::SymbolDef* next(Cursor& c, std::optional<Error>& err);

 private:
  struct FileEntry {
    std::string_view name;
    format::MoveToFront<std::string_view> functions;
  };
  uint64_t prev_address_ = 0;
  format::MoveToFront<FileEntry> files_;
  std::vector<format::SymbolFrame> frames_;
  format::SymbolDef def_;
};

// Decodes a whole symbols chunk into `table` (owned copies). Returns the error
// that stopped it, if any; entries before it are kept.
std::optional<Error> load_symbols(Cursor c, SymbolTable& table);

}  // namespace memloupe::reader
