#include "finalize/index_chunks.h"

#include <gtest/gtest.h>

#include <random>

#include "reader/chunk_io.h"

namespace memloupe::finalize {
namespace {

// The chunks append_index_chunks() wrote, read back by the reader's own chunk
// walk and decompression: their types, raw sizes and concatenated payloads.
struct ReadBack {
  std::vector<size_t> raw_sizes;
  std::vector<uint8_t> payload;
  bool all_index = true;
};

ReadBack read_back(const std::vector<uint8_t>& bytes) {
  ReadBack r;
  std::vector<uint8_t> buffer;
  const reader::ChunkWalk walk = reader::walk_chunks(bytes, 0, bytes.size(), reader::BrokenHeader::Stop,
                                                     [&](const reader::ChunkHop& hop) {
    r.all_index = r.all_index && hop.is(format::ChunkType::AnalysisIndex);
    auto chunk = reader::read_chunk(bytes, hop.offset);
    EXPECT_TRUE(chunk) << chunk.error().message;
    if (!chunk) return false;
    auto payload = reader::chunk_payload(*chunk, buffer);
    EXPECT_TRUE(payload) << payload.error().message;
    if (!payload) return false;
    r.raw_sizes.push_back(payload->size());
    r.payload.insert(r.payload.end(), payload->begin(), payload->end());
    return true;
  });
  EXPECT_TRUE(walk.complete);
  return r;
}

// Index-like bytes: zstd shrinks them, but not to nothing.
std::vector<uint8_t> index_of(size_t size) {
  std::mt19937 rng(13);
  std::vector<uint8_t> v(size);
  for (size_t i = 0; i < size; ++i) v[i] = static_cast<uint8_t>(rng() % 16 + (i % 64 == 0 ? 100 : 0));
  return v;
}

TEST(IndexChunks, UpToOnePartIsOneChunkAsBefore) {
  for (size_t size : {size_t{0}, size_t{1000}, kIndexPart}) {
    const std::vector<uint8_t> index = index_of(size);
    std::vector<uint8_t> out, one;
    append_index_chunks(out, index, 6);
    reader::append_chunk_compressed(one, format::ChunkType::AnalysisIndex, index, 6);
    EXPECT_EQ(out, one) << size;  // the bytes of the single chunk written before
    const ReadBack r = read_back(out);
    EXPECT_EQ(r.raw_sizes.size(), 1u);
    EXPECT_EQ(r.payload, index);
  }
}

TEST(IndexChunks, ALargeIndexIsAnEvenRunOfEqualPartsInOrder) {
  // 2.6 parts -> 4 parts; 4.5 -> 6; just over one part -> 2.
  for (size_t size : {kIndexPart * 13 / 5, kIndexPart * 9 / 2, kIndexPart + 1}) {
    const std::vector<uint8_t> index = index_of(size);
    std::vector<uint8_t> out = {};
    append_index_chunks(out, index, 3);
    const ReadBack r = read_back(out);
    EXPECT_TRUE(r.all_index);
    EXPECT_EQ(r.payload, index) << size;
    ASSERT_GE(r.raw_sizes.size(), 2u);
    EXPECT_EQ(r.raw_sizes.size() % 2, 0u) << size;
    for (size_t i = 0; i < r.raw_sizes.size(); ++i) {
      EXPECT_LE(r.raw_sizes[i], kIndexPart);
      if (i + 1 < r.raw_sizes.size()) {
        EXPECT_EQ(r.raw_sizes[i], r.raw_sizes[0]);
      }
      EXPECT_GT(r.raw_sizes[i], 0u);
    }
    EXPECT_LT(out.size(), size);  // compressed
    std::vector<uint8_t> again;
    append_index_chunks(again, index, 3);
    EXPECT_EQ(again, out);  // the same bytes every time, whichever thread did which part
  }
}

}  // namespace
}  // namespace memloupe::finalize
