#include "format/snapshot_writer.h"

#include <algorithm>

#include "format/varint.h"

namespace memloupe::format {

void SnapshotWriter::emit() noexcept {
  if (len_ == 0) return;
  write_chunk_header(buf_, ChunkType::Snapshot, 0, {payload(), len_}, static_cast<uint32_t>(len_));
  sink_.write_chunk({buf_, kChunkHeaderSize + len_});
  len_ = 0;
}

void SnapshotWriter::close_part() noexcept {
  if (!part_open_) return;
  put_u32(payload() + count_at_, count_);
  part_open_ = false;
}

void SnapshotWriter::open_part(SnapshotPart kind) noexcept {
  uint8_t* p = at();
  *p++ = static_cast<uint8_t>(kind);
  p = put_varint(p, number_);
  len_ = static_cast<size_t>(p - payload());
  kind_ = kind;
  part_open_ = true;
  count_at_ = len_;
  count_ = 0;
  prev_ = 0;
  len_ += 4;
}

void SnapshotWriter::reserve(SnapshotPart kind) noexcept {
  if (len_ + kMaxItem > kSnapshotChunkPayload) {
    close_part();
    emit();
  }
  if (!part_open_ || kind_ != kind) {
    close_part();
    open_part(kind);
  }
}

void SnapshotWriter::begin(const SnapshotBegin& b) noexcept {
  close_part();
  if (len_ + kMaxItem > kSnapshotChunkPayload) emit();
  uint8_t* p = at();
  *p++ = static_cast<uint8_t>(SnapshotPart::Begin);
  p = put_varint(p, number_);
  p = put_varint(p, b.time_ns);
  *p++ = b.at_exit ? 1 : 0;
  p = put_string(p, b.label.data(), b.label.size(), 4096);
  p = put_varint(p, b.threads);
  p = put_varint(p, b.threads_not_stopped);
  len_ = static_cast<size_t>(p - payload());
}

void SnapshotWriter::root(const SnapshotRootRecord& r) noexcept {
  reserve(SnapshotPart::Roots);
  uint8_t* p = at();
  *p++ = static_cast<uint8_t>(r.kind);
  p = put_varint(p, r.thread_plus_one);
  p = put_varint(p, r.os_tid);
  p = put_varint(p, r.address);
  p = put_varint(p, r.size);
  p = put_varint(p, r.pc);
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++roots_;
}

void SnapshotWriter::block(uint64_t address, uint64_t size, uint64_t alloc_id) noexcept {
  reserve(SnapshotPart::Blocks);
  uint8_t* p = at();
  p = put_varint(p, address - prev_);
  p = put_varint(p, size);
  p = put_varint(p, alloc_id);
  prev_ = address;
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++blocks_;
}

void SnapshotWriter::edge(uint32_t from, uint32_t to, bool interior, uint64_t offset) noexcept {
  reserve(SnapshotPart::Edges);
  uint8_t* p = at();
  p = put_varint(p, from - prev_);
  p = put_varint(p, (uint64_t{to} << 1) | (interior ? 1 : 0));
  if (from < roots_) p = put_varint(p, offset);
  prev_ = from;
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++edges_;
}

void SnapshotWriter::last_part(SnapshotPart kind, std::initializer_list<uint64_t> values) noexcept {
  close_part();
  if (len_ + kMaxItem > kSnapshotChunkPayload) emit();
  uint8_t* p = at();
  *p++ = static_cast<uint8_t>(kind);
  p = put_varint(p, number_);
  for (uint64_t v : values) p = put_varint(p, v);
  len_ = static_cast<size_t>(p - payload());
  emit();
}

void SnapshotWriter::end(uint64_t bytes_scanned, uint64_t stopped_ns) noexcept {
  last_part(SnapshotPart::End, {roots_, blocks_, edges_, bytes_scanned, stopped_ns});
}

void SnapshotWriter::stack(std::span<const uint64_t> frames) noexcept {
  reserve(SnapshotPart::Stacks);
  frames = frames.first(std::min(frames.size(), kMaxAnnexFrames));
  uint8_t* p = put_varint(at(), frames.size());
  for (uint64_t address : frames) p = put_varint(p, address);
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++stacks_;
}

void SnapshotWriter::site(uint32_t stack_plus_one, uint64_t size) noexcept {
  reserve(SnapshotPart::Sites);
  uint8_t* p = put_varint(at(), stack_plus_one);
  if (stack_plus_one != 0) p = put_varint(p, size);
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++sites_;
}

void SnapshotWriter::module(const SnapshotModule& m) noexcept {
  reserve(SnapshotPart::Modules);
  uint8_t* p = put_varint(at(), m.start);
  p = put_varint(p, m.end);
  p = put_varint(p, m.load_bias);
  p = put_string(p, m.path.data(), m.path.size(), 4096);
  p = put_string(p, reinterpret_cast<const char*>(m.build_id.data()), m.build_id.size(), 64);
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++modules_;
}

void SnapshotWriter::thread(const SnapshotThread& t) noexcept {
  reserve(SnapshotPart::Threads);
  uint8_t* p = put_varint(at(), t.id);
  p = put_varint(p, t.os_tid);
  p = put_string(p, t.name.data(), t.name.size(), 4096);
  len_ = static_cast<size_t>(p - payload());
  ++count_;
  ++threads_;
}

void SnapshotWriter::named() noexcept { last_part(SnapshotPart::Named, {stacks_, sites_, modules_, threads_}); }

}  // namespace memloupe::format
