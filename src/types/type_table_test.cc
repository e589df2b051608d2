#include "types/type_table.h"

#include <gtest/gtest.h>

#include "format/chunk.h"
#include "format/wire.h"

namespace memloupe::types {
namespace {

TypeTable sample() {
  TypeTable t;
  t[0x401000] = {"ns::Point", 12, 12, TypeShape::Object, TypeRule::InlinedConstructor};
  t[0x401234] = {"ns::Elem[]", 12, 0, TypeShape::Array, TypeRule::Allocator};
  t[0x7f0000001000] = {"ns::Shared", 40, 56, TypeShape::Object, TypeRule::MakeShared};
  return t;
}

TEST(TypeTable, RoundTrips) {
  const TypeTable t = sample();
  TypeTable back;
  const auto payload = encode_types(t);
  EXPECT_FALSE(decode_types(payload, 0, false, back));
  EXPECT_EQ(back, t);
}

TEST(TypeTable, ObjectsInABlockFollowTheShape) {
  const TypeTable t = sample();
  EXPECT_EQ(t.at(0x401000).objects_in(12), 1u);
  EXPECT_EQ(t.at(0x401000).objects_in(24), 0u);  // disagrees: unknown
  EXPECT_EQ(t.at(0x401234).objects_in(120), 10u);
  EXPECT_EQ(t.at(0x401234).objects_in(100), 0u);
  EXPECT_EQ(t.at(0x7f0000001000).objects_in(56), 1u);
}

TEST(TypeTable, EveryTruncationIsAnErrorThatKeepsTheEntriesBefore) {
  const auto payload = encode_types(sample());
  for (size_t n = 0; n < payload.size(); ++n) {
    TypeTable back;
    auto e = decode_types({payload.data(), n}, 100, false, back);
    ASSERT_TRUE(e) << n;
    EXPECT_NE(e->message.find("at offset"), std::string::npos) << e->message;
    EXPECT_LT(back.size(), 3u);
  }
}

TEST(TypeTable, BadFieldsAreNamed) {
  auto payload = encode_types(sample());
  payload[2] = 9;  // the first entry's rule (after the count and a 3-byte address delta)
  TypeTable back;
  auto e = decode_types(payload, 0, false, back);
  ASSERT_TRUE(e);
  EXPECT_NE(e->message.find("type rule"), std::string::npos) << e->message;
}

std::vector<uint8_t> trace_with(std::span<const uint8_t> types_payload) {
  std::vector<uint8_t> file(format::kPrologueSize);
  format::write_prologue(file.data());
  format::append_chunk(file, format::ChunkType::Header, std::vector<uint8_t>{1, 2, 3});
  format::append_chunk(file, format::ChunkType::Types, types_payload);
  return file;
}

TEST(TypeTable, LoadFindsTheChunkAndReportsItsDamage) {
  const auto payload = encode_types(sample());
  const auto file = trace_with(payload);
  LoadedTypes loaded = load_types(file);
  EXPECT_TRUE(loaded.present);
  EXPECT_FALSE(loaded.problem);
  EXPECT_EQ(loaded.table, sample());

  auto damaged = file;
  damaged.back() ^= 0x40;  // the payload's CRC no longer matches
  loaded = load_types(damaged);
  EXPECT_TRUE(loaded.present);
  ASSERT_TRUE(loaded.problem);
  EXPECT_NE(loaded.problem->message.find("types chunk"), std::string::npos) << loaded.problem->message;

  // A trace without the chunk (older, or not finalised) has no table and no problem.
  std::vector<uint8_t> old(file.begin(), file.end() - static_cast<ptrdiff_t>(payload.size() + format::kChunkHeaderSize));
  loaded = load_types(old);
  EXPECT_FALSE(loaded.present);
  EXPECT_FALSE(loaded.problem);
}

}  // namespace
}  // namespace memloupe::types
