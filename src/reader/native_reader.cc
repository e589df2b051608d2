#include "reader/native_reader.h"

#include <algorithm>
#include <string>

#include "format/wire.h"
#include "reader/chunk_io.h"
#include "reader/cursor.h"
#include "reader/header_decoder.h"
#include "reader/event_decoder.h"
#include "reader/streams.h"
#include "reader/symbols_decoder.h"

namespace memloupe::reader {
namespace {

using format::ChunkType;

class NativeReader final : public Reader {
 public:
  explicit NativeReader(std::unique_ptr<Bytes> bytes) : bytes_(std::move(bytes)) {}

  std::optional<Error> open() {
    auto file = bytes_->data();
    auto version = check_prologue(file);
    if (!version) return version.error();
    info_.version = static_cast<uint16_t>(*version);
    auto header = read_chunk(file, format::kPrologueSize);
    if (!header) return header.error();
    if (header->type != static_cast<uint8_t>(ChunkType::Header))
      return Error{"at offset 16: expected the header chunk (type 1), found type " +
                       std::to_string(header->type),
                   format::kPrologueSize};
    auto payload = chunk_payload(*header, buffer_);
    if (!payload) return payload.error();
    if (auto e = parse_header(cursor_for(*header, *payload), *version, info_)) return e;
    offset_ = format::kPrologueSize + format::kChunkHeaderSize + header->stored.size();
    decoder_ = std::make_unique<EventDecoder>(info_);
    set_alloc_key_source(decoder_->fresh_frames_at(), decoder_->backtrace_key_at());
    load_symbols_section();
    return std::nullopt;
  }

  const format::TraceInfo& info() const override { return info_; }
  const std::optional<Error>& error() const override { return error_; }
  const SymbolTable& symbols() const override { return symbols_; }
  bool has_symbols_section() const override { return has_symbols_; }
  uint64_t file_size() const override { return bytes_->data().size(); }
  uint64_t offset() const override { return offset_; }
  uint64_t events_read() const override { return events_; }
  uint32_t fresh_frames() const override { return decoder_->fresh_frames(); }
  BacktraceKey backtrace_key() const override { return decoder_->backtrace_key(); }
  BacktraceKey alloc_key(uint32_t& fresh) const override {
    fresh = decoder_->fresh_frames();
    return decoder_->backtrace_key();
  }
  void resume() override {
    if (at_end_) done_ = at_end_ = false;
  }

  // An event of an events chunk inline, the rest (a chunk's end, symbols,
  // the end) out of line: one loop for all saved two registers and built a
  // frame per event (~9 instructions of every event, callgrind of the suite's (a)).
  const format::Event* next() override {
    if (in_ == ChunkType::Events) [[likely]] {
      if (const format::Event* e = decoder_->next(streams_, error_)) [[likely]] {
        ++events_;
        return e;
      }
    }
    return next_slow();
  }

 private:
  // next() when the events chunk it read gave no event (its end, or damage),
  // or when it is not in one: so on the first turn an events chunk is not read
  // again. in_ is never Events when done_ (the decoder is not read after an error).
  [[gnu::noinline]] const format::Event* next_slow() {
    for (bool first = true; !done_; first = false) {
      const format::Event* e = nullptr;
      if (in_ == ChunkType::Events) {
        if (!first) e = decoder_->next(streams_, error_);
      } else if (in_ == ChunkType::Symbols) {
        e = symbols_stream_ ? next_symbol() : nullptr;
      }
      if (e) {
        ++events_;
        return e;
      }
      if (error_) {
        done_ = true;
        in_ = ChunkType::Header;
        break;
      }
      enter_next_chunk();
    }
    return nullptr;
  }

  Cursor cursor_for(const ChunkView& c, std::span<const uint8_t> payload) const {
    const bool packed = c.flags & format::kChunkZstd;
    return Cursor(payload, packed ? c.offset : c.offset + format::kChunkHeaderSize, packed);
  }

  const format::Event* next_symbol() {
    const format::SymbolDef* d = symbols_stream_->next(cursor_, error_);
    if (!d) return nullptr;
    event_ = *d;
    return &event_;
  }

  // Moves to the chunk at offset_, or finishes (at the end or on damage).
  void enter_next_chunk() {
    in_ = ChunkType::Header;  // "not inside a chunk we deliver from"
    const auto file = bytes_->data();
    if (offset_ == file.size()) {
      done_ = at_end_ = true;
      return;
    }
    if (skip_index_chunk(file)) return;
    auto chunk = read_chunk(file, offset_);
    if (!chunk) {
      error_ = chunk_cut_short(file, offset_) ? Error{"trace ends early at offset " + std::to_string(offset_) +
                                     " after " + std::to_string(events_) + " events (" +
                                     chunk.error().message + ")",
                                 offset_}
                         : chunk.error();
      done_ = true;
      return;
    }
    offset_ += format::kChunkHeaderSize + chunk->stored.size();
    const bool rows = chunk->type == static_cast<uint8_t>(ChunkType::Events);
    const bool columns = chunk->type == static_cast<uint8_t>(ChunkType::EventsColumns);
    if (!rows && !columns && chunk->type != static_cast<uint8_t>(ChunkType::Symbols)) {
      if (chunk->type == static_cast<uint8_t>(ChunkType::Header)) {
        error_ = Error{"at offset " + std::to_string(chunk->offset) +
                           ": expected an events or symbols chunk, found a second header",
                       chunk->offset};
        done_ = true;
      }
      return;  // unknown chunk types are skipped
    }
    auto payload = inflater_.payload(*chunk, buffer_);
    if (!payload) {
      error_ = payload.error();
      done_ = true;
      return;
    }
    cursor_ = cursor_for(*chunk, *payload);
    if (rows || columns) {
      if ((error_ = decoder_->begin_chunk(cursor_))) {
        done_ = true;
        return;
      }
      if (rows) {
        streams_.set_row(cursor_);
      } else {
        if ((error_ = read_columns(cursor_, info_.version, columns_))) {
          done_ = true;
          return;
        }
        streams_.set_columns(columns_);
      }
      in_ = ChunkType::Events;
    } else {
      symbols_stream_ = std::make_unique<SymbolsDecoder>();
      in_ = ChunkType::Symbols;
    }
  }

  // The analysis index delivers no events and has its own reader
  // (src/analysis/index.h), which checks it and falls back to the events when it
  // is damaged; so an intact header announcing an index is enough to step over
  // it, and a damaged index payload is not damage of the trace. The same holds
  // for the types table (src/types/type_table.h) and heap snapshots
  // (reader/snapshot_decoder.h), whose loaders report their own damage.
  bool skip_index_chunk(std::span<const uint8_t> file) {
    const std::optional<ChunkHop> hop = peek_chunk(file, offset_);
    if (!hop || hop->cut_short ||
        !(hop->is(ChunkType::AnalysisIndex) || hop->is(ChunkType::Types) || hop->is(ChunkType::Snapshot)))
      return false;
    offset_ = hop->next(file.size());
    return true;
  }

  // Finds the symbols chunks by hopping from chunk header to chunk header; only
  // the symbols chunks' payloads are read and checked here (the events are
  // checked as they are streamed), so opening a large trace costs a few hops,
  // not a CRC of the whole file. A damaged header is skipped by searching for
  // the next intact one, so symbols at the end of the file survive damage in
  // the middle.
  void load_symbols_section() {
    const auto file = bytes_->data();
    std::vector<uint8_t> buffer;
    walk_chunks(file, offset_, file.size(), BrokenHeader::Resync, [&](const ChunkHop& hop) {
      if (!hop.is(ChunkType::Symbols)) return true;
      auto chunk = read_chunk(file, hop.offset);
      if (!chunk) return true;
      auto payload = chunk_payload(*chunk, buffer);
      if (!payload) return true;
      has_symbols_ = true;
      (void)load_symbols(cursor_for(*chunk, *payload), symbols_);
      return true;
    });
  }

  std::unique_ptr<Bytes> bytes_;
  format::TraceInfo info_;
  SymbolTable symbols_;
  bool has_symbols_ = false;
  std::optional<Error> error_;
  uint64_t offset_ = 0;  // of the next chunk
  uint64_t events_ = 0;
  bool done_ = false;
  bool at_end_ = false;  // done_ at the end of the bytes, not at damage (resume())
  ChunkType in_ = ChunkType::Header;
  Cursor cursor_;    // the current chunk's payload
  Streams streams_;  // its events' field streams
  Columns columns_;  // (read_columns: ~3 KB, not on the stack per chunk)
  std::vector<uint8_t> buffer_;  // the current chunk's inflated payload
  ChunkInflater inflater_;        // the events' chunks, in order
  std::unique_ptr<EventDecoder> decoder_;
  std::unique_ptr<SymbolsDecoder> symbols_stream_;
  format::Event event_;
};

}  // namespace

Expected<std::unique_ptr<Reader>> open_native(std::unique_ptr<Bytes> bytes) {
  auto reader = std::make_unique<NativeReader>(std::move(bytes));
  if (auto e = reader->open()) return *e;
  return std::unique_ptr<Reader>(std::move(reader));
}

}  // namespace memloupe::reader
