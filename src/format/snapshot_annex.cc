#include "format/snapshot_annex.h"

#include "format/varint.h"

namespace memloupe::format {

namespace {

// Keeps each chunk's payload (the annex is compressed when it is appended).
class PayloadSink final : public ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> chunk) noexcept override {
    payloads.emplace_back(chunk.begin() + kChunkHeaderSize, chunk.end());
  }
  std::vector<std::vector<uint8_t>> payloads;
};

}  // namespace

std::vector<std::vector<uint8_t>> snapshot_annex_payloads(uint32_t number, const SnapshotAnnex& annex) {
  PayloadSink sink;
  sink.payloads.push_back(snapshot_names_payload(number, annex.names));
  std::vector<uint8_t> buffer(SnapshotWriter::kBufferBytes);
  SnapshotWriter w(sink, buffer.data(), number);
  for (std::span<const uint64_t> s : annex.stacks) w.stack(s);
  for (size_t b = 0; b < annex.stack_plus_one.size(); ++b) w.site(annex.stack_plus_one[b], annex.size[b]);
  for (const SnapshotModule& m : annex.modules) w.module(m);
  for (const SnapshotThread& t : annex.threads) w.thread(t);
  w.named();
  return std::move(sink.payloads);
}

std::vector<uint8_t> snapshot_names_payload(uint32_t number, std::span<const SnapshotName> names) {
  std::vector<uint8_t> out;
  uint8_t item[3 * kMaxVarint + 2 * (kMaxVarint + 4096)];
  uint8_t* p = item;
  *p++ = static_cast<uint8_t>(SnapshotPart::Names);
  p = put_varint(p, number);
  p = put_u32(p, static_cast<uint32_t>(names.size()));
  out.insert(out.end(), item, p);
  for (const SnapshotName& n : names) {
    p = put_varint(item, n.address);
    p = put_varint(p, n.size);
    p = put_string(p, n.name.data(), n.name.size(), 4096);
    p = put_string(p, n.file.data(), n.file.size(), 4096);
    p = put_varint(p, n.line);
    out.insert(out.end(), item, p);
  }
  return out;
}

}  // namespace memloupe::format
