// The retention views on a hand-built snapshot whose blocks' allocations come
// from a scripted trace (so sites are named through the same code as in
// `top`): what a user reads, and the JSON's fields.
#include "report/retention_json.h"
#include "report/text_retention.h"

#include <gtest/gtest.h>

#include "analysis/alloc_stacks.h"
#include "support/test_script.h"
#include "support/test_snapshot.h"

namespace memloupe::report {
namespace {

using retention::RootKind;

struct Fixture {
  analysis::testing::Script script;
  retention::HeapSnapshot snapshot;
  std::optional<analysis::AllocStacks> stacks;
  std::optional<retention::Retention> ret;
  std::optional<RetentionNames> names;

  explicit Fixture(const types::TypeTable* types = nullptr) {
    script.thread(0, 0, 100, "main");
    script.thread(1, 0, 101, "worker");
    script.symbol(0x100, {"make_map"}, "map.cc", 12);
    script.symbol(0x200, {"make_node"}, "map.cc", 20);
    script.symbol(0x300, {"fill_buffer"}, "buf.cc", 7);
    script.symbol(0x400, {"leak_ring"}, "ring.cc", 3);
    script.symbol(0x900, {"main"}, "main.cc", 1);
    // Allocation ids 0..6, in the order of the blocks below.
    script.alloc(1, 64, {0x100, 0x900});   // container
    script.alloc(2, 32, {0x200, 0x100, 0x900});  // node
    script.alloc(3, 32, {0x200, 0x100, 0x900});  // node
    script.alloc(4, 4096, {0x300, 0x900}, 1);    // buffer
    script.alloc(5, 8, {0x400, 0x900});  // ring
    script.alloc(6, 8, {0x400, 0x900});
    script.alloc(7, 100, {0x900});  // shared

    retention::testing::SnapshotBuilder s;
    const uint32_t map = s.root("g_map"), a = s.root("g_a"), b = s.root("g_b");
    const uint32_t frame = s.root("fill_buffer", RootKind::Stack);
    s.root("registers", RootKind::Register);
    s.base().roots[map].module = "/usr/bin/prog";
    s.base().roots[map].file = "map.cc";
    s.base().roots[map].line = 5;
    s.base().roots[frame].thread = format::ThreadId{1};
    s.base().roots[4].thread = format::ThreadId{1};
    const uint32_t container = s.block(64, 0), n1 = s.block(32, 1), n2 = s.block(32, 2), buffer = s.block(4096, 3),
                   r1 = s.block(8, 4), r2 = s.block(8, 5), shared = s.block(100, 6);
    s.root_edge(map, container);
    s.block_edge(container, n1);
    s.block_edge(container, n2, /*interior=*/true);
    s.root_edge(frame, buffer);
    s.block_edge(r1, r2);
    s.block_edge(r2, r1);
    s.root_edge(a, shared);
    s.root_edge(b, shared);
    snapshot = s.build();
    snapshot.label = "exit";
    snapshot.time_ns = 1'500'000'000;
    snapshot.at_exit = true;

    std::vector<format::AllocId> ids;
    for (const retention::Block& block : snapshot.blocks) ids.push_back(block.alloc);
    analysis::AllocStacksBuilder builder(script.info, ids);
    for (const format::Event& e : script.events) builder.add(e);
    stacks.emplace(std::move(builder).finish({}, script.symbols));
    ret.emplace(retention::analyze_retention(snapshot));
    names.emplace(snapshot, *stacks, SiteStyle{}, types);
  }
  SnapshotReport report() const { return {snapshot, *ret, *names, 1, 1}; }
};

TEST(RetentionView, RootsByRetainedWithTheirBiggestBlocksAndSites) {
  const Fixture f;
  const std::string text = render_retention(f.report(), {});
  EXPECT_NE(text.find("Snapshot 1 of 1 \"exit\" at 1.500 s (at exit): 4.24 KiB in 7 blocks live, 5 roots"),
            std::string::npos)
      << text;
  // The stack frame's buffer first, then the map; the two sharing globals retain nothing.
  const size_t frame = text.find("fill_buffer [thread 1 (worker)]");
  const size_t map = text.find("g_map  prog  map.cc:5");
  const size_t a = text.find("  g_a\n");
  ASSERT_NE(frame, std::string::npos) << text;
  ASSERT_NE(map, std::string::npos) << text;
  ASSERT_NE(a, std::string::npos) << text;
  EXPECT_LT(frame, map);
  EXPECT_LT(map, a);
  EXPECT_NE(text.find("retains 128 B in 3 blocks through 64 B at 0x100000 (alloc 0)  make_map  map.cc:12"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("shared between roots 100 B in 1 block"), std::string::npos) << text;
  EXPECT_NE(text.find("1 root reaches no block."), std::string::npos) << text;
}

// Live blocks by the type of their site (the innermost frame), counted as
// `memloupe types` counts them: a buffer's elements, a typed site whose block
// size disagrees as unknown, an untyped site of one size by that size.
TEST(RetentionView, LiveBlocksByType) {
  types::TypeTable table;
  table[0x200] = {"Node", 32, 32, types::TypeShape::Object, types::TypeRule::InlinedConstructor};
  table[0x300] = {"int[]", 4, 0, types::TypeShape::Array, types::TypeRule::Allocator};
  table[0x100] = {"", 64, 64, types::TypeShape::Object, types::TypeRule::Unknown};
  table[0x400] = {"Ring", 16, 16, types::TypeShape::Object, types::TypeRule::CalledConstructor};  // blocks are 8 B
  const Fixture f(&table);
  const std::vector<TypeRetention> rows = retention_by_type(f.report());
  std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>> got;
  for (const TypeRetention& r : rows) got.emplace_back(f.names->types()[r.type].name, r.live.bytes, r.live.blocks, r.objects);
  const std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>> expected = {
      {"int[]", 4096, 1, 1024}, {"(unknown, mixed sizes)", 116, 3, 3}, {"(unknown, 64 B)", 64, 1, 1}, {"Node", 64, 2, 2}};
  EXPECT_EQ(got, expected);

  const std::string text = render_retention(f.report(), {});
  EXPECT_NE(text.find("Live blocks by type (memloupe types):\n"), std::string::npos) << text;
  EXPECT_NE(text.find("4.00 KiB       1    1,024  int[]\n"), std::string::npos) << text;
  const std::string json = retention_json(std::vector<SnapshotReport>{f.report()}, {}, "");
  EXPECT_NE(json.find("\"types\":[{\"type\":\"int[]\",\"known\":true,\"type_size\":4,\"live_bytes\":4096,"
                      "\"live_blocks\":1,\"objects\":1024},"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find("{\"type\":\"(unknown, 64 B)\",\"known\":false,\"live_bytes\":64,"), std::string::npos) << json;
}

TEST(RetentionView, WithoutATypesTableEveryBlockIsOfUnknownType) {
  const Fixture f;
  const std::vector<TypeRetention> rows = retention_by_type(f.report());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(f.names->types()[rows[0].type].name, "(unknown, mixed sizes)");
  EXPECT_EQ(rows[0].live.blocks, 7u);
}

TEST(RetentionView, LeakKindsAndSites) {
  const Fixture f;
  const std::string text = render_retention(f.report(), {});
  EXPECT_NE(text.find("definitely lost: 8 B in 1 block\n"), std::string::npos) << text;
  EXPECT_NE(text.find("indirectly lost: 8 B in 1 block\n"), std::string::npos) << text;
  EXPECT_NE(text.find("possibly lost:   32 B in 1 block\n"), std::string::npos) << text;
  EXPECT_NE(text.find("still reachable: 4.19 KiB in 4 blocks\n"), std::string::npos) << text;
  // By site: the two nodes make one site of 64 B; the leaked ring one of 16 B.
  EXPECT_NE(text.find("64 B       2  make_node  map.cc:20"), std::string::npos) << text;
  EXPECT_NE(text.find("definitely lost    8 B       1  leak_ring  ring.cc:3"), std::string::npos) << text;
}

TEST(RetentionView, TreeShowsRetainedSizesDownTheDominatorTree) {
  const Fixture f;
  const std::string text = render_retention_tree(f.report(), {});
  EXPECT_NE(text.find("g_map [global]  retains 128 B in 3 blocks\n"
                      "└─ 64 B at 0x100000 (alloc 0)  make_map  map.cc:12  retains 128 B in 3 blocks\n"
                      "   ├─ 32 B at 0x110000 (alloc 1)  make_node  map.cc:20  retains 32 B in 1 block\n"
                      "   └─ 32 B at 0x120000 (alloc 2)  make_node  map.cc:20  retains 32 B in 1 block\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("(shared between roots) 100 B at 0x160000 (alloc 6)"), std::string::npos) << text;
  RetentionOptions narrow;
  narrow.breadth = 1;
  const std::string cut = render_retention_tree(f.report(), narrow);
  EXPECT_NE(cut.find("   └─ … 1 more: 32 B in 1 block\n"), std::string::npos) << cut;
}

TEST(RetentionView, PathsToABlockAnAddressAndASite) {
  const Fixture f;
  const PathTarget by_alloc = find_path_target(f.report(), "6");
  EXPECT_EQ(by_alloc.blocks, std::vector<uint32_t>{6});
  const std::string shared = render_retention_paths(f.report(), by_alloc, {});
  EXPECT_NE(shared.find("1. g_a [global]\n       → 100 B at 0x160000"), std::string::npos) << shared;
  EXPECT_NE(shared.find("2. g_b [global]\n"), std::string::npos) << shared;

  const PathTarget by_address = find_path_target(f.report(), "0x110010");
  EXPECT_EQ(by_address.blocks, std::vector<uint32_t>{1});
  const std::string node = render_retention_paths(f.report(), by_address, {});
  EXPECT_NE(node.find("1. g_map [global]\n       → 64 B at 0x100000 (alloc 0)  make_map  map.cc:12\n"
                      "       → 32 B at 0x110000"),
            std::string::npos)
      << node;

  const PathTarget ring = find_path_target(f.report(), "leak_ring");
  EXPECT_EQ(ring.blocks, (std::vector<uint32_t>{4, 5}));
  EXPECT_NE(render_retention_paths(f.report(), ring, {})
                .find("No root reaches it: definitely lost 8 B in 1 block, indirectly lost 8 B in 1 block."),
            std::string::npos);
  const PathTarget nothing = find_path_target(f.report(), "0x5");
  EXPECT_TRUE(nothing.blocks.empty());
  EXPECT_EQ(render_retention_paths(f.report(), nothing, {}), "No live block matches the block at 0x5.\n");
}

TEST(RetentionView, JsonHasTheIssuesNames) {
  const Fixture f;
  const SnapshotReport reports[] = {f.report()};
  const std::string json = retention_json(reports, {}, "snapshot chunk at offset 12: bad checksum");
  for (const char* fragment :
       {"{\"snapshots\":[{\"label\":\"exit\",\"time\":1.5,\"time_ns\":1500000000,\"at_exit\":true,",
        "{\"kind\":\"stack\",\"name\":\"fill_buffer\",\"thread\":\"thread 1 (worker)\",",
        "\"retained_bytes\":4096,\"retained_blocks\":1,\"reachable_bytes\":4096,\"reachable_blocks\":1,\"blocks\":[{",
        "{\"kind\":\"global\",\"name\":\"g_a\",\"address\":0,\"size\":0,\"retained_bytes\":0,\"retained_blocks\":0,"
        "\"reachable_bytes\":100,\"reachable_blocks\":1,\"blocks\":[]}",
        "\"leaks\":{\"definitely_lost_bytes\":8,\"definitely_lost_blocks\":1,\"indirectly_lost_bytes\":8,"
        "\"indirectly_lost_blocks\":1,\"possibly_lost_bytes\":32,\"possibly_lost_blocks\":1,"
        "\"still_reachable_bytes\":4292,\"still_reachable_blocks\":4}",
        "\"site\":[{\"function\":\"make_map\",\"file\":\"map.cc\",\"line\":12},{\"function\":\"main\"",
        "\"damage\":\"snapshot chunk at offset 12: bad checksum\"}"}) {
    EXPECT_NE(json.find(fragment), std::string::npos) << fragment << "\n" << json;
  }
}

}  // namespace
}  // namespace memloupe::report
