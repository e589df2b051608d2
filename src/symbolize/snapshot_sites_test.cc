#include "symbolize/snapshot_sites.h"

#include <gtest/gtest.h>

#include "format/snapshot_writer.h"

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

// A table's stacks (one number per distinct backtrace; an empty stack's span
// starting where the next stack's does) name the blocks as the same
// backtraces given one by one.
TEST(SnapshotSites, ATablesStacksNameTheBlocksAsTheirFramesDo) {
  const std::vector<uint64_t> pool = {0xa1, 0xa2, 0xa3, 0xb1};
  const std::span<const uint64_t> all(pool);
  const std::span<const uint64_t> a = all.subspan(0, 3), empty = all.subspan(3, 0), b = all.subspan(3, 1);
  struct Given {
    uint64_t id, size;
    uint32_t stack;
    std::span<const uint64_t> frames;
  };
  const std::vector<Given> blocks = {{9, 90, 7, b}, {1, 10, 0, a}, {3, 30, 3, empty}, {5, 50, 0, a}, {7, 70, 0, a}, {8, 80, 7, b}};

  SnapshotSites by_frames(two_snapshots()), by_table(two_snapshots());
  for (const Given& g : blocks) {
    by_frames.add_block(g.id, g.size, std::vector<uint64_t>(g.frames.begin(), g.frames.end()));
    by_table.add_table_block(g.id, g.size, g.stack, g.frames);
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
  const BlockSiteViews views = by_table.site_views(0);  // the same, the table's frames seen in place
  ASSERT_EQ(views.stacks.size(), 3u);
  EXPECT_EQ(views.stacks[0].data(), a.data());
  EXPECT_EQ(views.stack_plus_one, first.stack_plus_one);
}

// The annex cuts stacks at its limit: two of a table's numbers whose frames
// differ only past it, and one exactly as long as the limit with the same
// first frames, are one stack there, as when given one by one; a backtrace
// given by add_block afterwards (the finaliser's read of the events for the
// blocks a table did not have) finds a table's stack by its frames.
TEST(SnapshotSites, ATablesStacksCutAtTheLimitAreOneStack) {
  constexpr size_t kLimit = format::SnapshotWriter::kMaxAnnexFrames;
  std::vector<uint64_t> limit(kLimit), deeper(kLimit + 2), other(kLimit + 2), shallow{0xc1, 0xc2};
  for (size_t f = 0; f < kLimit + 2; ++f) {
    if (f < kLimit) limit[f] = 0x1000 + f;
    deeper[f] = 0x1000 + f;
    other[f] = f < kLimit ? 0x1000 + f : 0x9000 + f;
  }
  struct Given {
    uint64_t id;
    uint32_t stack;
    const std::vector<uint64_t>* frames;
  };
  const std::vector<Given> table = {{1, 4, &deeper}, {3, 5, &other}, {5, 6, &shallow}, {9, 8, &limit}};
  SnapshotSites by_frames(two_snapshots()), by_table(two_snapshots());
  for (const Given& g : table) {
    by_frames.add_block(g.id, g.id * 10, *g.frames);
    by_table.add_table_block(g.id, g.id * 10, g.stack, *g.frames);
  }
  by_frames.add_block(7, 70, shallow);
  by_table.add_block(7, 70, std::vector<uint64_t>(shallow));
  ASSERT_TRUE(by_table.complete());
  for (size_t i = 0; i < 2; ++i) expect_same(by_table.sites(i), by_frames.sites(i));
  const BlockSites first = by_table.sites(0);  // blocks 5, 1, 3, 9
  EXPECT_EQ(first.stack_plus_one, std::vector<uint32_t>({1, 2, 2, 2}));
  EXPECT_EQ(first.stacks[1], limit);
  EXPECT_EQ(by_table.sites(1).stack_plus_one, std::vector<uint32_t>({1, 2}));  // blocks 9, 7
}

}  // namespace
}  // namespace memloupe::symbolize
