// compact_trace: the finaliser's rewrite of the recorder's raw trace. The
// events are run through the real decoder with taps on its field streams
// (streams.h), which splits every event's bytes into the column form.
#include "finalize/compact.h"

#include <algorithm>
#include <string>

#include "finalize/chunk_writer.h"
#include "format/lanes.h"
#include "format/varint.h"
#include "reader/chunk_io.h"
#include "reader/event_decoder.h"
#include "reader/header_decoder.h"
#include "reader/streams.h"

namespace memloupe::finalize {
namespace {

using format::ChunkType;
using reader::append_chunk_compressed;
using reader::chunk_payload;
using reader::ChunkList;
using reader::Columns;
using reader::ColumnTaps;
using reader::ChunkView;
using reader::Cursor;
using reader::EventDecoder;
using reader::parse_header;
using reader::read_columns;
using reader::scan_chunks;
using reader::TappedStreams;

Cursor payload_cursor(const ChunkView& c, std::span<const uint8_t> payload) {
  const bool packed = c.flags & format::kChunkZstd;
  return Cursor(payload, packed ? c.offset : c.offset + format::kChunkHeaderSize, packed);
}

// Collects the streams of one output chunk, in the column form of the trace's
// version (its lanes, from version 5).
class ColumnChunk {
 public:
  ColumnChunk(ChunkWriter& out, const format::TraceInfo& info) : out_(out) {
    taps_.configure(info.version >= format::kLanesVersion, format::lane_bound(info.mode));
  }

  bool open() const { return open_; }
  void start(uint64_t time_ticks, uint64_t id_base) {
    time_ticks_ = time_ticks;
    id_base_ = id_base;
    open_ = true;
  }
  ColumnTaps& taps() { return taps_; }
  size_t size() const { return taps_.size(); }
  void flush() {
    if (open_ && size() != 0) {
      std::vector<uint8_t> payload(16);
      payload.reserve(16 + 2 + format::kMaxSubStreams * format::kMaxVarint + size());
      format::put_u64(payload.data(), time_ticks_);
      format::put_u64(payload.data() + 8, id_base_);
      taps_.write(payload);
      out_.append(ChunkType::EventsColumns, std::move(payload));
    }
    taps_.clear();
    open_ = false;
  }

 private:
  ChunkWriter& out_;
  ColumnTaps taps_;
  uint64_t time_ticks_ = 0, id_base_ = 0;
  bool open_ = false;
};

}  // namespace

Expected<Compacted> compact_trace(std::span<const uint8_t> trace, const CompactOptions& opt) {
  ChunkList list = scan_chunks(trace);
  if (list.chunks.empty() || list.chunks[0].type != static_cast<uint8_t>(ChunkType::Header))
    return list.error ? *list.error
                      : Error{"at offset 16: expected a header chunk", format::kPrologueSize};
  std::vector<uint8_t> buffer;  // the current input chunk's inflated payload
  format::TraceInfo info;
  auto header = chunk_payload(list.chunks[0], buffer);
  if (!header) return header.error();
  const uint32_t version = *reader::check_prologue(trace);  // scan_chunks checked it
  if (auto e = parse_header(payload_cursor(list.chunks[0], *header), version, info)) return *e;

  Compacted out;
  out.bytes.assign(trace.begin(), trace.begin() + format::kPrologueSize);
  // From here on out.bytes belongs to the writer, until writer.finish().
  ChunkWriter writer(out.bytes, opt.zstd_level);
  writer.append(ChunkType::Header, {header->begin(), header->end()});
  auto decoder = std::make_unique<EventDecoder>(info);
  ColumnChunk columns(writer, info);
  TappedStreams in;
  ColumnTaps::Mark before;  // the output before each event
  in.set_taps(&columns.taps());
  const size_t cap = std::min<size_t>(opt.max_events_payload, format::kMaxChunkRaw / 2);

  auto cols = std::make_unique<Columns>();
  reader::ChunkInflater inflater;
  for (size_t i = 1; i < list.chunks.size() && !out.damage; ++i) {
    const ChunkView& c = list.chunks[i];
    auto payload = inflater.payload(c, buffer);
    if (!payload) {
      out.damage = payload.error();
      break;
    }
    const bool rows = c.type == static_cast<uint8_t>(ChunkType::Events);
    if (!rows && c.type != static_cast<uint8_t>(ChunkType::EventsColumns)) {
      columns.flush();
      writer.append(static_cast<ChunkType>(c.type), {payload->begin(), payload->end()});
      continue;
    }
    Cursor cur = payload_cursor(c, *payload);
    if ((out.damage = decoder->begin_chunk(cur))) break;
    if (rows) {
      in.set_row(cur);
    } else if ((out.damage = read_columns(cur, version, *cols))) {
      break;
    } else {
      in.set_columns(*cols);
    }
    for (;;) {
      if (!columns.open()) columns.start(decoder->time_ticks(), decoder->allocs());
      columns.taps().mark(before);
      const format::Event* event = decoder->next(in, out.damage);
      if (event == nullptr) {
        if (out.damage) columns.taps().rewind(before);
        break;
      }
      if (opt.on_event) opt.on_event(*event, decoder->fresh_frames());
      // Cut only between events: never between a realloc's Free and its Alloc.
      if (columns.size() >= cap && !decoder->pending()) columns.flush();
    }
  }
  columns.flush();
  if (!out.damage) out.damage = list.error;  // where the chunk scan stopped, if it did
  if (opt.on_events_done) opt.on_events_done(out.damage);
  writer.finish();
  return out;
}

}  // namespace memloupe::finalize
