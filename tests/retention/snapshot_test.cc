// Heap snapshots taken by the real preload library in real programs, read back
// by the real loader: the roots, blocks and edges of a program whose heap is
// known (programs/retention_zoo.cc), and a snapshot of many threads.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <thread>
#include <map>
#include <string>
#include <vector>

#include "fixture.h"
#include "format/wire.h"
#include "reader/chunk_io.h"
#include "reader/snapshot_decoder.h"
#include "retention/retention.h"
#include "retention/snapshot_load.h"

namespace memloupe::retention {
namespace {

using recorder_test::binary;
using recorder_test::PreloadTest;
namespace fs = std::filesystem;

const char* kind_name(RootKind k) {
  switch (k) {
    case RootKind::Global: return "global";
    case RootKind::Stack: return "stack";
    case RootKind::Register: return "register";
    case RootKind::Tls: return "tls";
  }
  return "?";
}

// The snapshot as the tests look at it: each block's incoming edges, described
// by where they come from ("global g_chain", "block 72", "+interior").
class View {
 public:
  explicit View(const HeapSnapshot& s) : s_(s) {
    for (const Edge& e : s.edges) {
      std::string from = e.from < s.roots.size()
                             ? std::string(kind_name(s.roots[e.from].kind)) + " " + s.roots[e.from].name
                             : "block " + std::to_string(s.blocks[e.from - s.roots.size()].size);
      if (e.interior) from += " +interior";
      in_[e.to].push_back(from);
    }
    for (auto& [to, v] : in_) std::sort(v.begin(), v.end());
  }
  std::vector<uint32_t> blocks_of_size(uint64_t size) const {
    std::vector<uint32_t> out;
    for (uint32_t b = 0; b < s_.blocks.size(); ++b)
      if (s_.blocks[b].size == size) out.push_back(b);
    return out;
  }
  std::vector<std::string> in(uint32_t block) const {
    auto it = in_.find(block);
    return it == in_.end() ? std::vector<std::string>{} : it->second;
  }
  // The incoming edges of the only block of `size`.
  std::vector<std::string> in_of_size(uint64_t size) const {
    const auto b = blocks_of_size(size);
    EXPECT_EQ(b.size(), 1u) << "blocks of " << size << " bytes";
    return b.empty() ? std::vector<std::string>{} : in(b[0]);
  }
  const Root* root(std::string_view name) const {
    for (const Root& r : s_.roots)
      if (r.name == name) return &r;
    return nullptr;
  }

 private:
  const HeapSnapshot& s_;
  std::map<uint32_t, std::vector<std::string>> in_;
};

using Strings = std::vector<std::string>;

// The line of retention_zoo.cc that starts with `text` (1-based), 0 if none.
uint32_t zoo_line(std::string_view text) {
  std::ifstream in(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/retention/programs/retention_zoo.cc");
  std::string line;
  for (uint32_t n = 1; std::getline(in, line); ++n)
    if (line.starts_with(text)) return n;
  return 0;
}

// A global's root names its declaration from DWARF (docs/RETENTION.md).
void expect_declared(const Root* root, std::string_view declaration) {
  ASSERT_NE(root, nullptr) << declaration;
  EXPECT_TRUE(root->file.ends_with("tests/retention/programs/retention_zoo.cc")) << root->file;
  const uint32_t line = zoo_line(declaration);
  ASSERT_GT(line, 0u) << declaration;
  EXPECT_EQ(root->line, line) << declaration;
}

class SnapshotTest : public PreloadTest {
 protected:
  SnapshotSet run_zoo(std::vector<std::string> env = {"MEMLOUPE_MODE=all"}) {
    const auto r = run_both({binary("retention_zoo").string()}, env);
    EXPECT_EQ(r.out, "vector 101, map 3, snapshot ok\n");
    return load_snapshots(trace_path());
  }
};

TEST_F(SnapshotTest, KnownRootsBlocksAndEdgesWhileInsideAFunction) {
  const SnapshotSet set = run_zoo();
  EXPECT_EQ(set.damage, "");
  ASSERT_EQ(set.snapshots.size(), 2u);
  const HeapSnapshot& s = set.snapshots[0];
  EXPECT_EQ(s.label, "inside");
  EXPECT_FALSE(s.at_exit);
  EXPECT_GT(s.time_ns, 0u);
  EXPECT_EQ(trace().markers, (std::vector<std::string>{"snapshot: inside", "snapshot: exit"}));
  // Blocks are sorted and disjoint, edges sorted by source and unique.
  for (size_t b = 1; b < s.blocks.size(); ++b)
    EXPECT_LT(s.blocks[b - 1].address + s.blocks[b - 1].size, s.blocks[b].address + 1);
  for (size_t e = 1; e < s.edges.size(); ++e) {
    const Edge &a = s.edges[e - 1], &b = s.edges[e];
    EXPECT_TRUE(a.from < b.from || (a.from == b.from && a.to < b.to));
  }
  const View v(s);

  // Globals holding containers.
  EXPECT_EQ(v.in_of_size(808), Strings{"global g_vector"});
  const auto map_nodes = v.blocks_of_size(40);
  ASSERT_EQ(map_nodes.size(), 3u);
  // The header in g_map points at the root node (parent) and the leftmost and
  // rightmost (left, right); the children point up at the root node.
  EXPECT_EQ(v.in(map_nodes[0]).size() + v.in(map_nodes[1]).size() + v.in(map_nodes[2]).size(), 7u);
  for (uint32_t b : map_nodes) EXPECT_TRUE(std::ranges::count(v.in(b), "global g_map") == 1) << b;
  // The pointer chain: one block named by the global, the others by the chain.
  const auto chain = v.blocks_of_size(72);
  ASSERT_EQ(chain.size(), 3u);
  Strings chain_in;
  for (uint32_t b : chain) {
    ASSERT_EQ(v.in(b).size(), 1u);
    chain_in.push_back(v.in(b)[0]);
  }
  std::ranges::sort(chain_in);
  EXPECT_EQ(chain_in, (Strings{"block 72", "block 72", "global g_chain"}));
  // Two globals sharing one block.
  EXPECT_EQ(v.in_of_size(1000), (Strings{"global g_shared_a", "global g_shared_b"}));
  // The buffer held by with_buffer()'s frame while it took the snapshot (the
  // compiler may also have kept it in a callee-saved register across the call).
  Strings buffer_in = v.in_of_size(3000);
  std::erase(buffer_in, "register registers");
  EXPECT_EQ(buffer_in, Strings{"stack with_buffer"});
  // The leaked ring: each node reached only from another node.
  const auto ring = v.blocks_of_size(136);
  ASSERT_EQ(ring.size(), 3u);
  for (uint32_t b : ring) EXPECT_EQ(v.in(b), Strings{"block 136"});
  // Reached only through a pointer 16 bytes inside it.
  EXPECT_EQ(v.in_of_size(408), Strings{"global g_interior +interior"});
  // The other thread's TLS.
  EXPECT_EQ(v.in_of_size(504), Strings{"tls tls"});

  // The roots' names and places.
  const Root* vec = v.root("g_vector");
  ASSERT_NE(vec, nullptr);
  EXPECT_EQ(vec->kind, RootKind::Global);
  EXPECT_EQ(vec->size, 24u);
  EXPECT_TRUE(vec->module.ends_with("retention_zoo")) << vec->module;
  EXPECT_EQ(v.root("g_chain")->size, 8u);
  // Their declarations, from the program's DWARF.
  expect_declared(vec, "std::vector<uint64_t> g_vector;");
  expect_declared(v.root("g_chain"), "ChainNode* g_chain;");
  expect_declared(v.root("g_shared_b"), "char* g_shared_b;");
  const Root* frame = v.root("with_buffer");
  ASSERT_NE(frame, nullptr);
  EXPECT_EQ(frame->kind, RootKind::Stack);
  EXPECT_TRUE(frame->file.ends_with("retention_zoo.cc")) << frame->file;
  EXPECT_GT(frame->line, 0u);
  const Root* tls = v.root("tls");
  ASSERT_NE(tls, nullptr);
  EXPECT_TRUE(tls->module.ends_with("retention_zoo")) << tls->module;
  EXPECT_NE(tls->thread, frame->thread);  // the second thread's, not main's
  EXPECT_EQ(tls->size, 8u);               // t_held is the program's only TLS variable
}

TEST_F(SnapshotTest, AtExitAfterTheStaticDestructors) {
  const SnapshotSet set = run_zoo();
  ASSERT_EQ(set.snapshots.size(), 2u);
  const HeapSnapshot& s = set.snapshots[1];
  EXPECT_EQ(s.label, "exit");
  EXPECT_TRUE(s.at_exit);
  EXPECT_GT(s.time_ns, set.snapshots[0].time_ns);
  const View v(s);
  // The vector and map are destroyed, the buffer and the TLS block freed.
  for (uint64_t gone : {808u, 40u, 3000u, 504u}) EXPECT_TRUE(v.blocks_of_size(gone).empty()) << gone;
  EXPECT_EQ(v.in_of_size(1000), (Strings{"global g_shared_a", "global g_shared_b"}));
  EXPECT_EQ(v.in_of_size(408), Strings{"global g_interior +interior"});
  for (uint32_t b : v.blocks_of_size(136)) EXPECT_EQ(v.in(b), Strings{"block 136"});
}

// `memloupe run` finalises the trace (compacts and compresses its chunks): the
// snapshots come through unchanged.
TEST_F(SnapshotTest, SurvivesFinalise) {
  const SnapshotSet raw = run_zoo();
  const fs::path final_trace = dir_ / "final.trace";
  const auto r = recorder_test::run({binary("memloupe").string(), "run", "--all", "-o", final_trace.string(), "--",
                                     binary("retention_zoo").string()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const SnapshotSet set = load_snapshots(final_trace);
  EXPECT_EQ(set.damage, "");
  // The raw trace's blocks are named from its events; the finalised one's
  // from the annex the finaliser wrote, with the same sizes and backtraces.
  EXPECT_TRUE(raw.read_events);
  EXPECT_FALSE(set.read_events);
  ASSERT_EQ(set.snapshots.size(), raw.snapshots.size());
  for (size_t i = 0; i < set.snapshots.size(); ++i) {
    EXPECT_EQ(set.snapshots[i].label, raw.snapshots[i].label);
    EXPECT_EQ(set.snapshots[i].roots.size(), raw.snapshots[i].roots.size());
    ASSERT_EQ(set.snapshots[i].blocks.size(), raw.snapshots[i].blocks.size());
    // The two runs' blocks differ in address, not in order, size or site.
    size_t with_site = 0;
    for (size_t b = 0; b < set.snapshots[i].blocks.size(); ++b) {
      EXPECT_EQ(set.snapshots[i].blocks[b].size, raw.snapshots[i].blocks[b].size) << i << " " << b;
      const auto& fs = set.sites[i];
      const auto& rs = raw.sites[i];
      ASSERT_EQ(fs.stack_plus_one[b] != 0, rs.stack_plus_one[b] != 0) << i << " " << b;
      if (fs.stack_plus_one[b] == 0) continue;
      ++with_site;
      EXPECT_EQ(fs.stacks[fs.stack_plus_one[b] - 1].size(), rs.stacks[rs.stack_plus_one[b] - 1].size());
    }
    EXPECT_EQ(with_site, set.snapshots[i].blocks.size()) << "every block's Alloc is in the trace";
  }
  EXPECT_FALSE(set.threads.empty());
  EXPECT_FALSE(set.modules.empty());
  EXPECT_EQ(View(set.snapshots[0]).in_of_size(1000), (Strings{"global g_shared_a", "global g_shared_b"}));
}

// The finaliser names the roots into the trace: once the program's binary is
// gone, its globals and frames are still named.
TEST_F(SnapshotTest, FinalisedTraceNamesRootsWithoutTheBinary) {
  const fs::path copy = dir_ / "zoo_copy";
  fs::copy_file(binary("retention_zoo"), copy);
  const fs::path final_trace = dir_ / "final.trace";
  const auto r = recorder_test::run({binary("memloupe").string(), "run", "--all", "-o", final_trace.string(), "--",
                                     copy.string()});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  fs::remove(copy);
  const SnapshotSet set = load_snapshots(final_trace);
  EXPECT_EQ(set.damage, "");
  ASSERT_EQ(set.snapshots.size(), 2u);
  const View v(set.snapshots[0]);
  EXPECT_EQ(v.in_of_size(1000), (Strings{"global g_shared_a", "global g_shared_b"}));
  EXPECT_EQ(v.in_of_size(808), Strings{"global g_vector"});
  ASSERT_NE(v.root("g_vector"), nullptr);
  EXPECT_EQ(v.root("g_vector")->size, 24u);
  EXPECT_EQ(v.root("g_vector")->module, copy.string());
  expect_declared(v.root("g_vector"), "std::vector<uint64_t> g_vector;");
  expect_declared(v.root("g_interior"), "char* g_interior;");
  const Root* frame = v.root("with_buffer");
  ASSERT_NE(frame, nullptr);
  EXPECT_TRUE(frame->file.ends_with("retention_zoo.cc")) << frame->file;
}

TEST_F(SnapshotTest, NoneWithoutExitSnapshotOption) {
  const SnapshotSet set = run_zoo({"MEMLOUPE_MODE=all", "MEMLOUPE_SNAPSHOT_AT_EXIT=0"});
  ASSERT_EQ(set.snapshots.size(), 1u);
  EXPECT_EQ(set.snapshots[0].label, "inside");
}

TEST_F(SnapshotTest, SampledTraceIsRefusedWithAMessage) {
  const auto r = recorder_test::run({binary("retention_zoo").string()},
                                    {.preload = true,
                                     .env = {"MEMLOUPE_MODE=sampled", "MEMLOUPE_OUTPUT=" + trace_path().string()}});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_EQ(r.out, "vector 101, map 3, snapshot refused\n");
  EXPECT_EQ(r.err,
            "memloupe: heap snapshots need --all (MEMLOUPE_MODE=all): a sampled trace knows too few "
            "blocks to follow pointers through; no snapshot taken\n");
  const SnapshotSet set = load_snapshots(trace_path());
  EXPECT_TRUE(set.snapshots.empty());
  EXPECT_EQ(set.damage, "");
}

// `memloupe run --snapshot-signal` sets MEMLOUPE_SNAPSHOT_SIGNAL; `memloupe
// snapshot PID` reads it back from the process's environment and sends it.
TEST_F(SnapshotTest, OnTheSignalThatMemloupeSnapshotSends) {
  recorder_test::Process p({binary("retention_zoo").string(), "wait"},
                           {.preload = true,
                            .env = {"MEMLOUPE_MODE=all", "MEMLOUPE_SNAPSHOT_SIGNAL=USR2", "MEMLOUPE_FLUSH_MS=20",
                                    "MEMLOUPE_OUTPUT=" + trace_path().string()}});
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (p.stdout_so_far() != "ready\n" && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(p.stdout_so_far(), "ready\n");
  const auto sent = recorder_test::run({binary("memloupe").string(), "snapshot", std::to_string(p.pid())});
  EXPECT_TRUE(sent.exited(0)) << sent.describe();
  EXPECT_EQ(sent.out, "asked process " + std::to_string(p.pid()) + " for a heap snapshot (signal 12)\n");
  // The snapshot is on disk once the flush thread has written it.
  bool written = false;
  while (!written && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::ifstream in(trace_path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    for (const reader::ChunkView& c : reader::scan_chunks(bytes).chunks)
      written |= c.type == static_cast<uint8_t>(format::ChunkType::Snapshot);
  }
  EXPECT_TRUE(written);
  ::kill(p.pid(), SIGUSR1);
  const auto r = p.wait();
  EXPECT_TRUE(r.exited(0)) << r.describe();
  const SnapshotSet set = load_snapshots(trace_path());
  EXPECT_EQ(set.damage, "");
  ASSERT_EQ(set.snapshots.size(), 2u);
  EXPECT_EQ(set.snapshots[0].label, "signal");
  EXPECT_FALSE(set.snapshots[0].at_exit);
  const View v(set.snapshots[0]);
  EXPECT_EQ(v.in_of_size(1000), (Strings{"global g_shared_a", "global g_shared_b"}));
  EXPECT_EQ(set.snapshots[1].label, "exit");
  // Both show on the timeline as markers.
  const recorder_test::TraceData t = trace();
  EXPECT_EQ(t.markers, (std::vector<std::string>{"snapshot: signal", "snapshot: exit"}));
}

TEST_F(SnapshotTest, SnapshotCommandNeedsToKnowTheSignal) {
  const auto r = recorder_test::run({binary("memloupe").string(), "snapshot", std::to_string(::getpid())});
  EXPECT_TRUE(r.exited(1)) << r.describe();
  EXPECT_NE(r.err.find("was not started with --snapshot-signal"), std::string::npos) << r.err;
}

// 64 threads stopped at once; their output unchanged. (A 1 GiB heap of
// pointers is bench/snapshot_bench's; the 1 GiB test below keeps its heap
// cheap to build.)
TEST_F(SnapshotTest, SixtyFourThreads) {
  const auto r = run_both({binary("retention_many_threads").string(), "64", "64"}, {"MEMLOUPE_MODE=all"});
  EXPECT_EQ(r.out, "64 threads, 1024 blocks, checksum 32256104448, snapshot ok\n");
  const SnapshotSet set = load_snapshots(trace_path());
  EXPECT_EQ(set.damage, "");
  ASSERT_EQ(set.snapshots.size(), 2u);
  const HeapSnapshot& s = set.snapshots[0];
  EXPECT_EQ(s.label, "all built");
  size_t big = 0;
  for (const Block& b : s.blocks) big += b.size == 64 * 1024;
  EXPECT_EQ(big, 1024u);
  // Every list head is held by its thread's stack (or registers); every other
  // block by the block allocated after it.
  const View v(s);
  size_t from_threads = 0, from_blocks = 0;
  for (uint32_t b = 0; b < s.blocks.size(); ++b) {
    if (s.blocks[b].size != 64 * 1024) continue;
    for (const std::string& e : v.in(b)) (e.starts_with("block") ? from_blocks : from_threads) += 1;
  }
  EXPECT_GE(from_threads, 64u);
  EXPECT_GE(from_blocks, 1024u - 64u);
}

// 64 threads and a 1 GiB heap: 64 large blocks of 16 MiB (one written word
// each: the rest is untouched zero pages, so the program starts at once, and
// the scan still reads every byte) and 128,000 small blocks in lists. Both
// snapshots finish with every thread stopped, the program's output is
// unchanged, and the totals are right. (Like every test here, skipped in the
// sanitizer build: its preload library is ASan-instrumented and cannot be
// preloaded; see PreloadTest.)
TEST_F(SnapshotTest, SixtyFourThreadsAndAGibibyteHeap) {
  constexpr uint64_t kBig = 16u << 20, kSmall = 104, kLists = 64 * 2000;
  const auto r = run_both({binary("retention_many_threads").string(), "64", "1024", "untouched", "2000"}, {"MEMLOUPE_MODE=all"});
  EXPECT_EQ(r.out, "64 threads, 1024 MiB in 64 blocks, 128000 small blocks, checksum 4032140032000, snapshot ok\n");
  const SnapshotSet set = load_snapshots(trace_path());
  EXPECT_EQ(set.damage, "");
  ASSERT_EQ(set.snapshots.size(), 2u);
  EXPECT_EQ(set.snapshots[0].label, "all built");
  EXPECT_TRUE(set.snapshots[1].at_exit);
  for (const HeapSnapshot& s : set.snapshots) {
    uint64_t big = 0, big_bytes = 0, small = 0;
    for (const Block& b : s.blocks) {
      if (b.size == kBig) ++big, big_bytes += b.size;
      small += b.size == kSmall;
    }
    EXPECT_EQ(big, 64u) << s.label;
    EXPECT_EQ(big_bytes, 1ull << 30) << s.label;
    EXPECT_EQ(small, kLists) << s.label;
    // g_lists reaches every large block and, through their first words, every list.
    const Retention ret = analyze_retention(s);
    const auto root = std::ranges::find_if(s.roots, [](const Root& root) { return root.name == "g_lists"; });
    ASSERT_NE(root, s.roots.end()) << s.label;
    const RootRetention& g = ret.roots[static_cast<size_t>(root - s.roots.begin())];
    EXPECT_EQ(g.reachable.bytes, (1ull << 30) + kLists * kSmall) << s.label;
    EXPECT_EQ(g.reachable.blocks, 64u + kLists) << s.label;
  }
  // The scan read the whole heap, with all 64 workers stopped for the first.
  std::ifstream in(trace_path(), std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const reader::RawSnapshots raw = reader::decode_snapshots(bytes);
  ASSERT_EQ(raw.snapshots.size(), 2u);
  EXPECT_GE(raw.snapshots[0].bytes_scanned, (1ull << 30) + kLists * kSmall);
  EXPECT_EQ(raw.snapshots[0].threads, 65u);
  EXPECT_EQ(raw.snapshots[0].threads_not_stopped, 0u);
  std::cout << "1 GiB snapshot: " << raw.snapshots[0].bytes_scanned << " bytes scanned, threads stopped "
            << static_cast<double>(raw.snapshots[0].stopped_ns) / 1e9 << " s\n";
}

}  // namespace
}  // namespace memloupe::retention
