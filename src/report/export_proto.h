// A protobuf wire-format writer, just big enough for pprof's profile.proto.
//
// Why not libprotobuf: profile.proto needs five wire constructs (varint fields,
// packed varints, length-delimited bytes, nested messages, field tags), which
// take ~60 lines here; libprotobuf would add a build dependency, a protoc step
// and generated code for a file we only ever write.
//
// Wire format (https://protobuf.dev/programming-guides/encoding/):
//   tag    = varint(field_number << 3 | wire_type)   wire_type 0 = varint, 2 = length-delimited
//   varint = 7 bits per byte, least significant group first, high bit = "more follows"
// A nested message is written into its own ProtoWriter and appended with
// message(), which prefixes its length.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace memloupe::report {

class ProtoWriter {
 public:
  // Scalar field (int64/uint64/bool). Negative int64 values take 10 bytes, as the
  // spec says for int64 (not zigzag: that is sint64).
  void varint_field(uint32_t field, uint64_t value);
  // Like varint_field, but omitted when zero (proto3 default values are implicit).
  void varint_field_nonzero(uint32_t field, uint64_t value) {
    if (value != 0) varint_field(field, value);
  }
  void bytes_field(uint32_t field, std::span<const uint8_t> bytes);
  void string_field(uint32_t field, std::string_view text);
  void message(uint32_t field, const ProtoWriter& nested) { bytes_field(field, nested.bytes()); }
  // A repeated scalar field, packed into one length-delimited record.
  void packed_varints(uint32_t field, std::span<const uint64_t> values);

  const std::vector<uint8_t>& bytes() const { return out_; }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  void raw_varint(uint64_t value);
  void tag(uint32_t field, uint32_t wire_type) { raw_varint(uint64_t{field} << 3 | wire_type); }

  std::vector<uint8_t> out_;
};

}  // namespace memloupe::report
