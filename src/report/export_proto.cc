#include "report/export_proto.h"

namespace memloupe::report {

namespace {
constexpr uint32_t kVarint = 0;
constexpr uint32_t kLengthDelimited = 2;
}  // namespace

void ProtoWriter::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<uint8_t>(value));
}

void ProtoWriter::varint_field(uint32_t field, uint64_t value) {
  tag(field, kVarint);
  raw_varint(value);
}

void ProtoWriter::bytes_field(uint32_t field, std::span<const uint8_t> bytes) {
  tag(field, kLengthDelimited);
  raw_varint(bytes.size());
  out_.insert(out_.end(), bytes.begin(), bytes.end());
}

void ProtoWriter::string_field(uint32_t field, std::string_view text) {
  bytes_field(field, {reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

void ProtoWriter::packed_varints(uint32_t field, std::span<const uint64_t> values) {
  ProtoWriter body;
  for (uint64_t v : values) body.raw_varint(v);
  message(field, body);
}

}  // namespace memloupe::report
