#include "reader/symbols_decoder.h"

#include <memory>
#include <string>

#include "format/varint.h"
#include "format/wire.h"

namespace memloupe::reader {

const format::SymbolDef* SymbolsDecoder::next(Cursor& c, std::optional<Error>& err) {
  if (c.at_end()) return nullptr;
  uint64_t delta;
  uint8_t n;
  if (!c.varint(delta)) {
    err = c.expected("a symbol address (zigzag varint)");
    return nullptr;
  }
  if (!c.u8(n)) {
    err = c.expected("a frame count (u8)");
    return nullptr;
  }
  prev_address_ += static_cast<uint64_t>(format::unzigzag(delta));
  frames_.clear();
  for (unsigned i = 0; i < n; ++i) {
    const size_t at = c.pos();
    uint32_t lo;
    uint16_t hi;
    if (!c.u32(lo) || !c.u16(hi)) {
      err = c.expected("a 48-bit symbol frame word");
      return nullptr;
    }
    const uint64_t word = lo | uint64_t{hi} << 32;
    const unsigned file_code = word & 31, func_code = (word >> 5) & 31;
    format::SymbolFrame f;
    f.line = static_cast<uint32_t>((word >> 10) & 0xffffff);
    f.column = static_cast<uint32_t>(word >> 34);

    FileEntry* file;
    if (file_code == files_.kMiss) {
      std::string_view name;
      if (!c.string(name, format::kMaxString)) {
        err = c.expected("a file name (varint length, bytes)");
        return nullptr;
      }
      file = &files_.push(FileEntry{name, {}});
    } else if (file_code < files_.size()) {
      file = &files_.use(file_code);
    } else {
      err = c.expected_at(at, "a file code below " + std::to_string(files_.size()) + " or 31");
      return nullptr;
    }
    f.file = file->name;
    if (func_code == file->functions.kMiss) {
      std::string_view name;
      if (!c.string(name, format::kMaxString)) {
        err = c.expected("a function name (varint length, bytes)");
        return nullptr;
      }
      f.function = file->functions.push(name);
    } else if (func_code < file->functions.size()) {
      f.function = file->functions.use(func_code);
    } else {
      err = c.expected_at(at, "a function code below " + std::to_string(file->functions.size()) +
                                  " or 31");
      return nullptr;
    }
    frames_.push_back(f);
  }
  def_.address = prev_address_;
  def_.frames = frames_;
  return &def_;
}

std::optional<Error> load_symbols(Cursor c, SymbolTable& table) {
  // The decoder is large (nested move-to-front lists); keep it off the stack.
  auto dec = std::make_unique<SymbolsDecoder>();
  std::optional<Error> err;
  while (const format::SymbolDef* d = dec->next(c, err)) {
    std::vector<OwnedFrame>& out = table[d->address];
    out.clear();
    for (const format::SymbolFrame& f : d->frames)
      out.push_back({std::string(f.function), std::string(f.file), f.line, f.column});
  }
  return err;
}

}  // namespace memloupe::reader
