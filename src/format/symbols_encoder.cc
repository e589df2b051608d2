#include "format/symbols_encoder.h"

#include "format/chunk.h"
#include "format/varint.h"

#include <utility>

namespace memloupe::format {

SymbolsEncoder::SymbolsEncoder(size_t max_chunk_payload) : max_payload_(max_chunk_payload) {
  if (max_payload_ > kMaxChunkRaw / 2) max_payload_ = kMaxChunkRaw / 2;
}

void SymbolsEncoder::start_chunk() {
  if (!cur_.empty()) done_.push_back(std::move(cur_));
  cur_.clear();
  prev_address_ = 0;
  files_ = {};
}

void SymbolsEncoder::put_string(std::string_view s) {
  if (s.size() > kMaxString) s = s.substr(0, kMaxString);
  uint8_t tmp[kMaxVarint];
  cur_.insert(cur_.end(), tmp, put_varint(tmp, s.size()));
  cur_.insert(cur_.end(), s.begin(), s.end());
}

void SymbolsEncoder::add(uint64_t address, std::span<const SymbolFrame> frames) {
  if (cur_.size() >= max_payload_) start_chunk();
  if (frames.size() > kMaxSymbolFrames) frames = frames.first(kMaxSymbolFrames);
  uint8_t tmp[kMaxVarint + 1];
  uint8_t* p = put_varint(tmp, zigzag(static_cast<int64_t>(address - prev_address_)));
  *p++ = static_cast<uint8_t>(frames.size());
  cur_.insert(cur_.end(), tmp, p);
  prev_address_ = address;

  for (const SymbolFrame& f : frames) {
    auto same_file = [](const FileEntry& e, std::string_view n) { return e.name == n; };
    auto same_name = [](const std::string& e, std::string_view n) { return e == n; };
    unsigned file_code = files_.find(f.file, same_file);
    FileEntry& file = file_code == files_.kMiss ? files_.push(FileEntry{std::string(f.file), {}})
                                                : files_.use(file_code);
    unsigned func_code = file.functions.find(f.function, same_name);
    if (func_code == file.functions.kMiss)
      file.functions.push(std::string(f.function));
    else
      file.functions.use(func_code);

    const uint64_t line = f.line < kMaxSymbolLine ? f.line : kMaxSymbolLine;
    const uint64_t column = f.column < kMaxSymbolColumn ? f.column : kMaxSymbolColumn;
    const uint64_t word = file_code | uint64_t{func_code} << 5 | line << 10 | column << 34;
    uint8_t w[6];
    put_u32(w, static_cast<uint32_t>(word));
    put_u16(w + 4, static_cast<uint16_t>(word >> 32));
    cur_.insert(cur_.end(), w, w + 6);
    if (file_code == files_.kMiss) put_string(f.file);
    if (func_code == file.functions.kMiss) put_string(f.function);
  }
}

std::vector<std::vector<uint8_t>> SymbolsEncoder::take_payloads() {
  start_chunk();
  return std::exchange(done_, {});
}

void SymbolsEncoder::finish(std::vector<uint8_t>& out) {
  for (const std::vector<uint8_t>& payload : take_payloads())
    append_chunk(out, ChunkType::Symbols, payload);
}

}  // namespace memloupe::format
