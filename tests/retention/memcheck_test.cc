// The leak kinds of an at-exit snapshot against valgrind memcheck's on the same
// program: retention_zoo (a leaked ring, a block reached only by an interior
// pointer, globals, a thread) and two real programs.
//
// memcheck runs with --leak-check-heuristics=none (an interior pointer stays
// interior, as in the snapshot) and without its freeres hooks (so the run-time
// libraries' buffers are still there, as they are for the snapshot). One kind
// of block is left out of both sides: the DTV glibc allocates for each thread
// (_dl_allocate_tls). A thread that has exited keeps it in glibc's cache of
// thread stacks, which memcheck scans (it scans every writable mapping) and the
// snapshot does not, and the recorder's own TLS makes it 32 bytes bigger. See
// docs/RETENTION.md.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include "fixture.h"
#include "reader/reader.h"
#include "retention/leak_kinds.h"
#include "retention/node_graph.h"
#include "retention/snapshot_load.h"

namespace memloupe::retention {
namespace {

using recorder_test::binary;
using recorder_test::PreloadTest;
namespace fs = std::filesystem;

// Blocks whose allocation passed through one of these functions are left out.
bool excluded(const std::vector<std::string>& functions) {
  for (const std::string& f : functions)
    if (f == "_dl_allocate_tls" || f == "allocate_dtv") return true;
  return false;
}

struct Kinds {
  Amount definitely, indirectly, possibly, reachable;
  bool operator==(const Kinds&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Kinds& k) {
  return o << "definitely " << k.definitely.bytes << "/" << k.definitely.blocks << ", indirectly "
           << k.indirectly.bytes << "/" << k.indirectly.blocks << ", possibly " << k.possibly.bytes << "/"
           << k.possibly.blocks << ", reachable " << k.reachable.bytes << "/" << k.reachable.blocks;
}

// memcheck's loss records, summed by kind, leaving out the excluded ones.
Kinds memcheck_kinds(const std::string& log) {
  Kinds k;
  std::istringstream in(log);
  const std::regex record(R"(==\d+== ([\d,]+)(?: \(([\d,]+) direct, [\d,]+ indirect\))? bytes in ([\d,]+) blocks are (definitely lost|indirectly lost|possibly lost|still reachable) in loss record)");
  const std::regex frame(R"(==\d+==    (?:at|by) 0x[0-9A-F]+: ([^ ]+) )");
  const auto number = [](std::string s) {
    std::erase(s, ',');
    return std::stoull(s);
  };
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, record)) continue;
    const uint64_t bytes = number(m[2].matched ? m[2].str() : m[1].str());
    const uint64_t blocks = number(m[3].str());
    const std::string kind = m[4].str();
    std::vector<std::string> functions;
    while (std::getline(in, line) && std::regex_search(line, m, frame)) functions.push_back(m[1].str());
    if (excluded(functions)) continue;
    Amount& a = kind == "definitely lost" ? k.definitely
                : kind == "indirectly lost" ? k.indirectly
                : kind == "possibly lost"   ? k.possibly
                                            : k.reachable;
    a.bytes += bytes;
    a.blocks += blocks;
  }
  return k;
}

// The at-exit snapshot's kinds, leaving out the same blocks (found by their
// backtraces in the finalised trace).
Kinds snapshot_kinds(const fs::path& trace) {
  const SnapshotSet set = load_snapshots(trace);
  EXPECT_EQ(set.damage, "");
  if (set.snapshots.empty() || !set.snapshots.back().at_exit) {
    ADD_FAILURE() << "no at-exit snapshot";
    return {};
  }
  const HeapSnapshot& s = set.snapshots.back();
  std::unordered_set<uint64_t> out;
  auto r = reader::Reader::open(trace.string());
  EXPECT_TRUE(r.ok());
  if (!r) return {};
  while (const format::Event* e = (*r)->next()) {
    const auto* a = std::get_if<format::Alloc>(e);
    if (!a) continue;
    std::vector<std::string> functions;
    for (uint64_t pc : a->backtrace)
      if (auto it = (*r)->symbols().find(pc); it != (*r)->symbols().end())
        for (const reader::OwnedFrame& f : it->second) functions.push_back(f.function);
    if (excluded(functions)) out.insert(a->id.value);
  }
  const LeakKinds kinds = classify_leaks(s, build_node_graph(s));
  Kinds k;
  for (size_t b = 0; b < s.blocks.size(); ++b) {
    if (out.contains(s.blocks[b].alloc.value)) continue;
    const uint64_t size = s.blocks[b].size;
    switch (kinds.of_block[b]) {
      case LeakKind::DefinitelyLost: k.definitely.add(size); break;
      case LeakKind::IndirectlyLost: k.indirectly.add(size); break;
      case LeakKind::PossiblyLost: k.possibly.add(size); break;
      case LeakKind::StillReachable: k.reachable.add(size); break;
    }
  }
  return k;
}

class MemcheckTest : public PreloadTest {
 protected:
  void compare(const std::vector<std::string>& argv, const Kinds* expected = nullptr) {
    const fs::path trace = dir_ / "final.trace", log = dir_ / "memcheck.log";
    std::vector<std::string> run = {binary("memloupe").string(), "run", "--all", "-o", trace.string(), "--"};
    run.insert(run.end(), argv.begin(), argv.end());
    const auto traced = recorder_test::run(run);
    ASSERT_TRUE(traced.exited(0)) << traced.describe();
    std::vector<std::string> vg = {"/usr/bin/valgrind", "--leak-check=full", "--show-leak-kinds=all",
                                   "--leak-check-heuristics=none", "--run-libc-freeres=no",
                                   "--run-cxx-freeres=no", "--log-file=" + log.string()};
    vg.insert(vg.end(), argv.begin(), argv.end());
    const auto checked = recorder_test::run(vg, {.timeout = std::chrono::milliseconds(300'000)});
    ASSERT_TRUE(checked.exited(0)) << checked.describe();
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    const Kinds theirs = memcheck_kinds(text);
    const Kinds ours = snapshot_kinds(trace);
    EXPECT_EQ(ours, theirs) << "memcheck's log:\n" << text;
    // Not a comparison of two empty sets: both saw the program's heap.
    EXPECT_GT(ours.reachable.blocks + ours.definitely.blocks + ours.possibly.blocks, 0u);
    std::cout << "leak kinds of " << argv[0] << ": " << ours << "\n";
    if (expected) {
      EXPECT_EQ(ours, *expected);
    }
  }
};

TEST_F(MemcheckTest, RetentionZoo) {
  // The ring (136 B definitely, 2 x 136 B indirectly lost), the interior-only
  // block (408 B possibly lost); the two globals' blocks, stdout's buffer and
  // libstdc++'s emergency exception pool still reachable.
  Kinds known;
  known.definitely = {136, 1};
  known.indirectly = {272, 2};
  known.possibly = {408, 1};
  known.reachable = {78016, 6};
  compare({binary("retention_zoo").string()}, &known);
}

TEST_F(MemcheckTest, Sort) {
  const fs::path input = dir_ / "lines";
  {
    std::ofstream out(input);
    for (int i = 0; i < 2000; ++i) out << (i * 7919) % 2003 << " line\n";
  }
  compare({"/usr/bin/sort", "-n", "-o", (dir_ / "sorted").string(), input.string()});
}

TEST_F(MemcheckTest, Awk) {
  compare({"/usr/bin/awk", "BEGIN { for (i = 0; i < 500; i++) a[i] = i \"x\"; n = 0; for (k in a) n++; "
                           "print n > \"/dev/null\" }"});
}

}  // namespace
}  // namespace memloupe::retention
