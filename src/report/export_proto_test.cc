#include "report/export_proto.h"

#include <gtest/gtest.h>

namespace memloupe::report {
namespace {

using Bytes = std::vector<uint8_t>;

// Expected bytes are the worked examples of the protobuf encoding guide.
TEST(ProtoWriter, VarintFieldMatchesTheSpecExample) {
  ProtoWriter w;
  w.varint_field(1, 150);
  EXPECT_EQ(w.bytes(), (Bytes{0x08, 0x96, 0x01}));
}

TEST(ProtoWriter, StringField) {
  ProtoWriter w;
  w.string_field(2, "testing");
  EXPECT_EQ(w.bytes(), (Bytes{0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'}));
}

TEST(ProtoWriter, PackedVarints) {
  ProtoWriter w;
  std::vector<uint64_t> values = {3, 270, 86942};
  w.packed_varints(4, values);
  EXPECT_EQ(w.bytes(), (Bytes{0x22, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05}));
}

TEST(ProtoWriter, NestedMessageIsLengthPrefixed) {
  ProtoWriter inner;
  inner.varint_field(1, 150);
  ProtoWriter outer;
  outer.message(3, inner);
  EXPECT_EQ(outer.bytes(), (Bytes{0x1a, 0x03, 0x08, 0x96, 0x01}));
}

TEST(ProtoWriter, NegativeInt64TakesTenBytes) {
  ProtoWriter w;
  w.varint_field(1, static_cast<uint64_t>(int64_t{-1}));
  EXPECT_EQ(w.bytes(), (Bytes{0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST(ProtoWriter, ZeroIsOmittedOnlyWhenAsked) {
  ProtoWriter w;
  w.varint_field_nonzero(5, 0);
  EXPECT_TRUE(w.bytes().empty());
  w.varint_field(5, 0);
  EXPECT_EQ(w.bytes(), (Bytes{0x28, 0x00}));
}

}  // namespace
}  // namespace memloupe::report
