#include <gtest/gtest.h>

#include "format/chunk.h"
#include "format/symbols_encoder.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"
#include "support/test_streams.h"

namespace memloupe::reader {
namespace {

using format::SymbolFrame;

std::vector<uint8_t> trace_with(format::SymbolsEncoder& symbols, bool compress) {
  testing::Stream s = testing::make_stream(1, {.events = 5, .rare_events = false});
  if (compress) append_symbols(s.bytes, symbols, 3);
  else symbols.finish(s.bytes);
  return s.bytes;
}

TEST(Symbols, RoundTripThroughTheReader) {
  for (bool compress : {false, true}) {
    format::SymbolsEncoder enc(/*max_chunk_payload=*/200);  // forces several chunks
    std::vector<std::pair<uint64_t, std::vector<SymbolFrame>>> want;
    std::vector<std::string> names;
    names.reserve(400);
    for (unsigned i = 0; i < 100; ++i) {
      names.push_back("func" + std::to_string(i % 37));
      names.push_back("file" + std::to_string(i % 45) + ".cc");
      std::vector<SymbolFrame> frames;
      for (unsigned k = 0; k <= i % 3; ++k)
        frames.push_back({names[names.size() - 2], names.back(), i * 10 + k, k});
      want.push_back({0x400000 + (i * 7919) % 1000 * 16, frames});  // not sorted
    }
    want.push_back({0x1, {}});                                  // no frames
    want.push_back({0x2, {{"", "", 0, 0}}});                     // unknown names
    want.push_back({0x3, {{"big", "x.cc", 1u << 30, 1u << 20}}});  // clamped
    for (auto& [addr, frames] : want) enc.add(addr, frames);

    auto r = Reader::from_bytes(trace_with(enc, compress));
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_TRUE((*r)->has_symbols_section());
    const SymbolTable& table = (*r)->symbols();
    std::vector<std::string> defs;
    while (const format::Event* e = (*r)->next())
      if (std::holds_alternative<format::SymbolDef>(*e)) defs.push_back(testing::event_text(*e));
    EXPECT_FALSE((*r)->error()) << (*r)->error()->message;
    ASSERT_EQ(defs.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      auto [addr, frames] = want[i];
      if (addr == 0x3) frames[0] = {"big", "x.cc", format::kMaxSymbolLine, format::kMaxSymbolColumn};
      EXPECT_EQ(defs[i], testing::event_text(format::SymbolDef{addr, frames}));
      ASSERT_TRUE(table.count(addr)) << addr;
      const auto& owned = table.at(addr);
      ASSERT_EQ(owned.size(), frames.size());
      for (size_t k = 0; k < frames.size(); ++k) {
        EXPECT_EQ(owned[k].function, frames[k].function);
        EXPECT_EQ(owned[k].file, frames[k].file);
        EXPECT_EQ(owned[k].line, frames[k].line);
        EXPECT_EQ(owned[k].column, frames[k].column);
      }
    }
  }
}

TEST(Symbols, MoveToFrontCodesRepeatedNamesCompactly) {
  format::SymbolsEncoder enc;
  const SymbolFrame f{"a_long_function_name", "a_long_file_name.cc", 1, 1};
  std::vector<uint8_t> one, many;
  enc.add(0x10, std::span(&f, 1));
  enc.finish(one);
  for (uint64_t a = 0; a < 100; ++a) enc.add(0x10 + a, std::span(&f, 1));
  enc.finish(many);
  // After the first entry, each costs: address delta 1 + count 1 + 6-byte word.
  EXPECT_EQ(many.size() - one.size(), 99u * 8);
}

TEST(Symbols, SectionFoundDespiteDamageBeforeIt) {
  format::SymbolsEncoder enc;
  const SymbolFrame f{"main", "main.cc", 3, 0};
  enc.add(0x42, std::span(&f, 1));
  std::vector<uint8_t> bytes = trace_with(enc, false);
  // Damage the first events chunk's payload; the header stays intact.
  const auto chunks = scan_chunks(bytes).chunks;
  ASSERT_GE(chunks.size(), 3u);
  bytes[chunks[1].offset + format::kChunkHeaderSize + 3] ^= 0xff;
  auto r = Reader::from_bytes(bytes);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)->has_symbols_section());
  EXPECT_EQ((*r)->symbols().at(0x42).at(0).function, "main");
  EXPECT_EQ((*r)->next(), nullptr);
  ASSERT_TRUE((*r)->error());
  EXPECT_NE((*r)->error()->message.find("CRC-32C"), std::string::npos);
}

}  // namespace
}  // namespace memloupe::reader
