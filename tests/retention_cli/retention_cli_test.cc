// `memloupe retention` on a real trace: retention_zoo (globals holding
// containers, a chain, two globals sharing a block, a buffer held by a stack
// frame, a leaked ring, a block reached only by an interior pointer, a
// thread's TLS) recorded with `memloupe run --all`.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cli_runner.h"
#include "tool_runner.h"
#include "format/wire.h"
#include "reader/chunk_io.h"

namespace memloupe {
namespace {

namespace fs = std::filesystem;
using analysis_testing::quote;
using analysis_testing::Result;
using analysis_testing::run_memloupe;

class RetentionCli : public ::testing::Test {
 protected:
  // One trace per test process (ctest runs each test in its own).
  static void SetUpTestSuite() {
    scratch_ = fs::path(MEMLOUPE_BINARY_DIR) / "tests" / "retention_cli" / ("scratch." + std::to_string(::getpid()));
    fs::create_directories(scratch_);
  }
  static void TearDownTestSuite() { fs::remove_all(scratch_); }

  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    if (fs::exists(trace())) return;
    const Result r = run_memloupe(scratch_, "run --all -o " + quote(trace().string()) + " -- " +
                                                quote(std::string(MEMLOUPE_BINARY_DIR) + "/bin/retention_zoo"));
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(r.out, "vector 101, map 3, snapshot ok\n");
  }
  static fs::path trace() { return scratch_ / "zoo.trace"; }
  Result retention(const std::string& args) { return run_memloupe(scratch_, "retention " + quote(trace().string()) + " " + args); }

  // The JSON object of root `name` from its start to its "blocks" list.
  static std::string root_json(const std::string& json, const std::string& kind, const std::string& name) {
    const size_t at = json.find("{\"kind\":\"" + kind + "\",\"name\":\"" + name + "\"");
    if (at == std::string::npos) return {};
    return json.substr(at, json.find("\"blocks\":[", at) - at);
  }

  // The line of the test program's source that is `text` (1-based), 0 if none.
  static uint32_t zoo_line(const std::string& text) {
    std::ifstream src(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/retention/programs/retention_zoo.cc");
    std::string line;
    for (uint32_t n = 1; std::getline(src, line); ++n)
      if (line == text) return n;
    return 0;
  }
  static std::vector<uint8_t> read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write_file(const fs::path& p, const std::vector<uint8_t>& bytes) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }

  static fs::path scratch_;
};
fs::path RetentionCli::scratch_;

TEST_F(RetentionCli, RetainedAndReachableBytesOfKnownRoots) {
  const Result r = retention("--snapshot inside --json");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("{\"snapshots\":[{\"label\":\"inside\","), std::string::npos) << r.out;
  // g_chain -> 72 -> 72 -> 72.
  EXPECT_NE(root_json(r.out, "global", "g_chain")
                .find("\"retained_bytes\":216,\"retained_blocks\":3,\"reachable_bytes\":216,\"reachable_blocks\":3"),
            std::string::npos)
      << r.out;
  // Its declaration's file and line, from the program's DWARF.
  const uint32_t declared = zoo_line("ChainNode* g_chain;");
  ASSERT_GT(declared, 0u);
  EXPECT_NE(root_json(r.out, "global", "g_chain")
                .find("tests/retention/programs/retention_zoo.cc\",\"line\":" + std::to_string(declared) + ","),
            std::string::npos)
      << r.out;
  // Two globals share one 1000-byte block: reachable from both, retained by neither.
  for (const char* g : {"g_shared_a", "g_shared_b"}) {
    EXPECT_NE(root_json(r.out, "global", g)
                  .find("\"retained_bytes\":0,\"retained_blocks\":0,\"reachable_bytes\":1000,\"reachable_blocks\":1"),
              std::string::npos)
        << g << "\n" << r.out;
  }
  // The vector's 808-byte buffer and the map's three 40-byte nodes.
  EXPECT_NE(root_json(r.out, "global", "g_vector").find("\"retained_bytes\":808,\"retained_blocks\":1"),
            std::string::npos)
      << r.out;
  EXPECT_NE(root_json(r.out, "global", "g_map").find("\"retained_bytes\":120,\"retained_blocks\":3"),
            std::string::npos)
      << r.out;
  // The interior pointer still holds its block (docs/RETENTION.md).
  EXPECT_NE(root_json(r.out, "global", "g_interior").find("\"retained_bytes\":408,\"retained_blocks\":1"),
            std::string::npos)
      << r.out;
  // The second thread's TLS block.
  EXPECT_NE(root_json(r.out, "tls", "tls").find("\"reachable_bytes\":504,\"reachable_blocks\":1"), std::string::npos)
      << r.out;
  // Live blocks by type, from the types table finalise wrote: the vector's
  // buffer of 101 uint64_t, the map's three nodes.
  EXPECT_NE(r.out.find("{\"type\":\"long unsigned int[]\",\"known\":true,\"type_size\":8,\"live_bytes\":808,"
                       "\"live_blocks\":1,\"objects\":101}"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"type_size\":40,\"live_bytes\":120,\"live_blocks\":3,\"objects\":3}"), std::string::npos)
      << r.out;
  // The frame of with_buffer() reaches its 3000-byte buffer.
  EXPECT_NE(root_json(r.out, "stack", "with_buffer").find("\"reachable_bytes\":3000,\"reachable_blocks\":1"),
            std::string::npos)
      << r.out;
}

TEST_F(RetentionCli, LeakKindsOfTheRingAndTheInteriorBlock) {
  const Result r = retention("--snapshot exit --json");
  ASSERT_EQ(r.status, 0) << r.err;
  // The leaked ring of three 136-byte nodes: one definitely, two indirectly lost.
  EXPECT_NE(r.out.find("\"definitely_lost_bytes\":136,\"definitely_lost_blocks\":1,\"indirectly_lost_bytes\":272,"
                       "\"indirectly_lost_blocks\":2,\"possibly_lost_bytes\":0,\"possibly_lost_blocks\":0,"
                       "\"still_reachable_bytes\":0,\"still_reachable_blocks\":0,\"site\":["),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\"indirectly_lost_bytes\":272,\"indirectly_lost_blocks\":2,\"possibly_lost_bytes\":408,"
                       "\"possibly_lost_blocks\":1,"),
            std::string::npos)
      << r.out;

  const Result paths = retention("--snapshot exit --paths leak_ring");
  ASSERT_EQ(paths.status, 0) << paths.err;
  EXPECT_NE(paths.out.find("No root reaches it: definitely lost 136 B in 1 block, indirectly lost 272 B in 2 blocks."),
            std::string::npos)
      << paths.out;
}

TEST_F(RetentionCli, TextTreePathsAndSummary) {
  const Result text = retention("--snapshot 2");
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Snapshot 2 of 2 \"exit\""), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("g_chain  retention_zoo"), std::string::npos) << text.out;
  // The global's row names its declaration: "g_chain  retention_zoo  …/retention_zoo.cc:35".
  const size_t row = text.out.find("g_chain  retention_zoo  ");
  ASSERT_NE(row, std::string::npos) << text.out;
  EXPECT_NE(text.out.substr(row, text.out.find('\n', row) - row)
                .find("tests/retention/programs/retention_zoo.cc:" + std::to_string(zoo_line("ChainNode* g_chain;"))),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("possibly lost:   408 B in 1 block\n"), std::string::npos) << text.out;
  // The shared text options: a site starts at its first own frame (the
  // vector's buffer at build_globals, not inside std::), --all-frames at the
  // allocation; --depth 1 makes one row of every block make<>() allocated.
  const Result own = retention("--snapshot inside --sites 0 --frames 1");
  ASSERT_EQ(own.status, 0) << own.err;
  EXPECT_NE(own.out.find("808 B       1  build_globals  "), std::string::npos) << own.out;
  EXPECT_NE(own.out.find("(+6 library frames inside: --all-frames)"), std::string::npos) << own.out;
  const Result all = retention("--snapshot inside --sites 0 --frames 1 --all-frames");
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_NE(all.out.find("808 B       1  std::__new_allocator<…>::allocate()  "), std::string::npos) << all.out;
  const Result depth = retention("--snapshot inside --sites 0 --depth 1");
  ASSERT_EQ(depth.status, 0) << depth.err;
  EXPECT_NE(depth.out.find("5.41 KiB      10  make<…>  "), std::string::npos) << depth.out;
  EXPECT_EQ(own.out.find("      10  make<…>  "), std::string::npos) << own.out;

  const Result inside = retention("--snapshot inside");
  ASSERT_EQ(inside.status, 0) << inside.err;
  EXPECT_NE(inside.out.find("Live blocks by type (memloupe types):\n"), std::string::npos) << inside.out;
  EXPECT_NE(inside.out.find("120 B       3        3  std::_Rb_tree_node<"), std::string::npos) << inside.out;

  const Result tree = retention("--snapshot exit --tree");
  ASSERT_EQ(tree.status, 0) << tree.err;
  EXPECT_NE(tree.out.find("g_chain [global]  retains 216 B in 3 blocks\n└─ 72 B at "), std::string::npos) << tree.out;
  EXPECT_NE(tree.out.find("(shared between roots) 1000 B at "), std::string::npos) << tree.out;

  const Result paths = retention("--snapshot exit --paths build_globals");
  ASSERT_EQ(paths.status, 0) << paths.err;
  // Every block of build_globals() hangs off a global one pointer away.
  EXPECT_NE(paths.out.find(". g_chain [global]\n       → 72 B at "), std::string::npos) << paths.out;
  EXPECT_NE(paths.out.find(". g_interior [global]\n       → 408 B at "), std::string::npos) << paths.out;

  const Result summary = run_memloupe(scratch_, "summary " + quote(trace().string()));
  ASSERT_EQ(summary.status, 0) << summary.err;
  EXPECT_NE(summary.out.find("Heap snapshots: 2 (\"inside\" at "), std::string::npos) << summary.out;
  EXPECT_NE(summary.out.find("`, or the Retention panel of `memloupe report`\n"), std::string::npos) << summary.out;

  const Result missing = retention("--snapshot 3");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("no snapshot labelled or numbered '3' (it holds 2)"), std::string::npos) << missing.err;
}

TEST_F(RetentionCli, DamagedSnapshotIsReportedAndTheRestShown) {
  std::vector<uint8_t> bytes;
  {
    std::ifstream in(trace(), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const reader::ChunkList list = reader::scan_chunks(bytes);
  ASSERT_FALSE(list.error);
  uint64_t first = 0;
  for (const reader::ChunkView& c : list.chunks) {
    if (c.type == static_cast<uint8_t>(format::ChunkType::Snapshot) && first == 0) first = c.offset;
  }
  ASSERT_NE(first, 0u);
  bytes[first + format::kChunkHeaderSize + 40] ^= 0x55;  // inside the "inside" snapshot's payload
  const fs::path damaged = scratch_ / "damaged.trace";
  {
    std::ofstream out(damaged, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  const Result r = run_memloupe(scratch_, "retention " + quote(damaged.string()));
  EXPECT_EQ(r.status, 4);  // kDamaged: what was readable was used
  EXPECT_NE(r.err.find("a snapshot chunk is damaged"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("Snapshot 1 of 1 \"exit\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("g_chain  retention_zoo"), std::string::npos) << r.out;

  const Result json = run_memloupe(scratch_, "retention --json " + quote(damaged.string()));
  EXPECT_EQ(json.status, 4);
  EXPECT_NE(json.out.find("\"damage\":\"") , std::string::npos) << json.out;
}

// The finaliser's annex of the first snapshot (its blocks' sizes and sites)
// damaged: the damage is named, the events name the blocks instead, and the
// view is the same.
TEST_F(RetentionCli, DamagedAnnexFallsBackToTheEvents) {
  std::vector<uint8_t> bytes = read_file(trace());
  const reader::ChunkList list = reader::scan_chunks(bytes);
  ASSERT_FALSE(list.error);
  std::vector<uint64_t> snapshot_chunks;
  for (const reader::ChunkView& c : list.chunks)
    if (c.type == static_cast<uint8_t>(format::ChunkType::Snapshot)) snapshot_chunks.push_back(c.offset);
  // The recorder's two snapshots, then per snapshot the Names chunk and the rest of its annex.
  ASSERT_EQ(snapshot_chunks.size(), 6u);
  bytes[snapshot_chunks[3] + format::kChunkHeaderSize + 2] ^= 0x55;
  const fs::path damaged = scratch_ / "damaged_annex.trace";
  write_file(damaged, bytes);
  const Result good = retention("--snapshot inside --json");
  ASSERT_EQ(good.status, 0) << good.err;
  const Result r = run_memloupe(scratch_, "retention --snapshot inside --json " + quote(damaged.string()));
  EXPECT_EQ(r.status, 4);
  EXPECT_NE(r.err.find("a snapshot chunk is damaged: at offset " +
                       std::to_string(snapshot_chunks[3] + format::kChunkHeaderSize)),
            std::string::npos)
      << r.err;
  // The same view, and the damage named at its end.
  const size_t damage = r.out.find(",\"damage\":");
  ASSERT_NE(damage, std::string::npos) << r.out;
  EXPECT_EQ(r.out.substr(0, damage), good.out.substr(0, good.out.rfind('}'))) << r.out;
}

// The HTML report of a trace with snapshots, in real headless Chromium: the
// retention view (there by default; --retention is kept and changes nothing)
// lists both snapshots' roots, and a click opens a root's tree.
TEST_F(RetentionCli, HtmlReportShowsTheRetentionView) {
  const char* env = std::getenv("MEMLOUPE_CHROMIUM");
  const std::string chromium = env ? env : "/usr/bin/chromium";
  if (!report::testing::executable(chromium)) GTEST_SKIP() << "no chromium at " << chromium;
  if (!report::testing::on_path("node")) GTEST_SKIP() << "node is not installed (Debian nodejs)";
  const fs::path html = scratch_ / "zoo.html";
  const fs::path flagged = scratch_ / "zoo_flagged.html";
  const Result r = run_memloupe(scratch_, "report " + quote(trace().string()) + " -o " + quote(html.string()));
  ASSERT_EQ(r.status, 0) << r.err;
  const Result f =
      run_memloupe(scratch_, "report --retention " + quote(trace().string()) + " -o " + quote(flagged.string()));
  ASSERT_EQ(f.status, 0) << f.err;
  EXPECT_EQ(read_file(html), read_file(flagged));
  // The globals' rows name their declarations (from DWARF, at finalise).
  const std::vector<uint8_t> page = read_file(html);
  EXPECT_NE(std::string(page.begin(), page.end())
                .find("tests/retention/programs/retention_zoo.cc:" + std::to_string(zoo_line("ChainNode* g_chain;"))),
            std::string::npos);
  const report::testing::Run check = report::testing::run(
      "node " + quote(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/report/browser_check.mjs") + " " +
      quote(html.string()) + " --chromium " + quote(chromium));
  ASSERT_EQ(check.status, 0) << check.out;
  auto kv = report::testing::key_values(check.out);
  EXPECT_EQ(kv["errors"], "0") << kv["error"];
  EXPECT_EQ(kv["retention.snapshots"], "2");
  // At least the program's own: "inside" has g_vector, g_map, g_chain, g_interior,
  // g_shared_a/b, the TLS, with_buffer's frame, registers and a shared block;
  // "exit" g_chain, g_interior, g_shared_a/b and the shared block. The C
  // and C++ libraries' roots come on top.
  EXPECT_GE(std::stoi(kv["retention.roots"]), 15) << check.out;
  EXPECT_EQ(kv["retention.open"], "0");
  EXPECT_EQ(kv["retention.visible_nodes"], "0");  // every tree closed
  EXPECT_EQ(kv["retention_opened.open"], "1");
  EXPECT_GE(std::stoi(kv["retention_opened.visible_nodes"]), 1) << check.out;
}

}  // namespace
}  // namespace memloupe
