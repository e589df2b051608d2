#include "finalize/chunk_writer.h"

#include <gtest/gtest.h>

#include <random>

#include "reader/chunk_io.h"

namespace memloupe::finalize {
namespace {

using format::ChunkType;

// Payloads that zstd shrinks (repetitive), that it cannot (random) and empty
// ones, in a mix of chunk types: the writer must give exactly the bytes of
// reader::append_chunk_compressed, in the order the chunks were appended.
std::vector<std::pair<ChunkType, std::vector<uint8_t>>> payloads() {
  std::mt19937 rng(7);
  std::vector<std::pair<ChunkType, std::vector<uint8_t>>> out;
  for (int i = 0; i < 40; ++i) {
    std::vector<uint8_t> p(static_cast<size_t>(rng() % 200000));
    if (i % 3 == 0) {
      for (uint8_t& b : p) b = static_cast<uint8_t>(rng());
    } else {
      for (size_t j = 0; j < p.size(); ++j) p[j] = static_cast<uint8_t>(j % (i + 2));
    }
    out.emplace_back(i % 5 == 0 ? ChunkType::Symbols : ChunkType::EventsColumns, std::move(p));
  }
  out.emplace_back(ChunkType::EventsColumns, std::vector<uint8_t>{});
  return out;
}

TEST(ChunkWriter, WritesWhatAppendChunkCompressedWrites) {
  for (int level : {0, 1, 6}) {
    std::vector<uint8_t> expected = {1, 2, 3};
    for (const auto& [type, p] : payloads()) reader::append_chunk_compressed(expected, type, p, level);
    std::vector<uint8_t> out = {1, 2, 3};
    ChunkWriter writer(out, level);
    for (auto& [type, p] : payloads()) writer.append(type, std::move(p));
    writer.finish();
    EXPECT_EQ(out, expected) << "level " << level;
  }
}

TEST(ChunkWriter, FinishesOnDestructionAndFinishIsIdempotent) {
  std::vector<uint8_t> expected;
  std::vector<uint8_t> out;
  {
    ChunkWriter writer(out, 3);
    for (auto& [type, p] : payloads()) {
      reader::append_chunk_compressed(expected, type, p, 3);
      writer.append(type, std::move(p));
    }
    writer.finish();
    writer.finish();
  }
  EXPECT_EQ(out, expected);
  std::vector<uint8_t> out2;
  {
    ChunkWriter writer(out2, 3);
    for (auto& [type, p] : payloads()) writer.append(type, std::move(p));
  }  // the destructor waits for the worker
  EXPECT_EQ(out2, expected);
}

}  // namespace
}  // namespace memloupe::finalize
