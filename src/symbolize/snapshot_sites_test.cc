#include "symbolize/snapshot_sites.h"

#include <gtest/gtest.h>

namespace memloupe::symbolize {
namespace {

reader::RawSnapshots two_snapshots() {
  reader::RawSnapshots raw;
  for (const std::vector<uint64_t>& ids : {std::vector<uint64_t>{5, 1, 3, 9}, std::vector<uint64_t>{9, 7}}) {
    reader::RawSnapshot& s = raw.snapshots.emplace_back();
    for (uint64_t id : ids) s.blocks.push_back({.address = 0x1000 + id, .extent = 16, .alloc_id = id});
  }
  return raw;
}

void expect_same(const BlockSites& got, const BlockSites& want) {
  EXPECT_EQ(got.stacks, want.stacks);
  EXPECT_EQ(got.stack_plus_one, want.stack_plus_one);
  EXPECT_EQ(got.size, want.size);
}

// A table's spans (one stack, one span; an empty stack's span starting where
// the next stack's does) name the blocks as the same backtraces given one by one.
TEST(SnapshotSites, ATablesSpansNameTheBlocksAsTheirFramesDo) {
  const std::vector<uint64_t> pool = {0xa1, 0xa2, 0xa3, 0xb1, 0xa1, 0xa2, 0xa3};
  const std::span<const uint64_t> all(pool);
  const std::span<const uint64_t> a = all.subspan(0, 3), empty = all.subspan(3, 0), b = all.subspan(3, 1),
                                  a_again = all.subspan(4, 3);  // another table entry with a's frames
  struct Given {
    uint64_t id, size;
    std::span<const uint64_t> frames;
  };
  const std::vector<Given> blocks = {{9, 90, b}, {1, 10, a}, {3, 30, empty}, {5, 50, a_again}, {7, 70, a}, {8, 80, b}};

  SnapshotSites by_frames(two_snapshots()), by_table(two_snapshots());
  for (const Given& g : blocks) {
    by_frames.add_block(g.id, g.size, std::vector<uint64_t>(g.frames.begin(), g.frames.end()));
    by_table.add_table_block(g.id, g.size, g.frames);
  }
  ASSERT_TRUE(by_table.complete());
  for (size_t i = 0; i < 2; ++i) expect_same(by_table.sites(i), by_frames.sites(i));

  const BlockSites first = by_table.sites(0);  // blocks 5, 1, 3, 9
  ASSERT_EQ(first.stacks.size(), 3u);
  EXPECT_EQ(first.stacks[0], std::vector<uint64_t>({0xa1, 0xa2, 0xa3}));
  EXPECT_EQ(first.stack_plus_one, std::vector<uint32_t>({1, 1, 2, 3}));
  EXPECT_TRUE(first.stacks[1].empty());
  EXPECT_EQ(first.stacks[2], std::vector<uint64_t>({0xb1}));
  EXPECT_EQ(first.size, std::vector<uint64_t>({50, 10, 30, 90}));
}

}  // namespace
}  // namespace memloupe::symbolize
