// Golden tests: `memloupe dump` of fixed traces against checked-in text
// (tests/golden/*.dump), compared with `diff -u`.
//
// small.dump: a small native trace built here through format::Encoder, with a
// symbols section; every kind of event, inlined frames, unknown symbols, quoting.
// viewer_test.dump: the memtrace sample trace (tests/data/memtrace).
//
// After an intended change of the dump format, regenerate with
//   MEMLOUPE_UPDATE_GOLDEN=1 ctest -R Golden
// and review the diff of tests/golden/ like code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <vector>

#include "cli_run.h"
#include "format/encoder.h"
#include "format/symbols_encoder.h"

namespace memloupe::inspect_testing {
namespace {

using namespace format;

class VectorSink final : public ChunkSink {
 public:
  explicit VectorSink(std::vector<uint8_t>& out) : out_(out) {}
  void write_chunk(std::span<const uint8_t> chunk) noexcept override {
    out_.insert(out_.end(), chunk.begin(), chunk.end());
  }

 private:
  std::vector<uint8_t>& out_;
};

// The fixed trace. Times (ns) are whole milliseconds after the first half.
std::vector<uint8_t> small_trace() {
  std::vector<uint8_t> bytes(kMaxFileHeader);
  HeaderFields header;
  header.mode = Mode::Sampled;
  header.bytes_per_sample = 4096;
  header.pid = 1234;
  header.start_wall_ns = 1'700'000'000'000'000'000;
  header.start_mono_ns = 5'000'000'000;
  header.host = "golden-host";
  header.executable = "/usr/bin/small";
  using namespace std::string_view_literals;
  header.argv_nul_separated = "small\0--flag\0"sv;
  bytes.resize(encode_file_header(header, bytes));

  VectorSink sink(bytes);
  auto enc = std::make_unique<Encoder>(sink, Mode::Sampled);
  const ThreadId main{0}, worker{1};
  const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef};
  enc->module_load(ModuleLoad{0, 0x400000, 0x410000, 0, "/usr/bin/small", build_id});
  enc->thread_start(main, 0, 1234);
  enc->thread_name(main, 0, "main");
  enc->module_load(ModuleLoad{500'000, 0x7f0000000000, 0x7f0000020000, 0x7f0000000000,
                              "/usr/lib/libplugin.so", {}});

  const uint64_t bt_site1[] = {0x401010, 0x401100, 0x401200};
  const uint64_t bt_site2[] = {0x401020, 0x401100, 0x401200};
  const uint64_t bt_worker[] = {0x401030, 0x401300};
  const uint64_t bt_grow[] = {0x401040, 0x401100, 0x401200};
  const AllocId a0 = enc->alloc({main, 1'000'000, 48, 0, 0, 1, Func::Malloc, bt_site1});
  const AllocId a1 = enc->alloc({main, 2'000'000, 10'000, 0, 0, 3, Func::NewArray, bt_site2});
  enc->thread_start(worker, 3'000'000, 1240);
  enc->thread_name(worker, 3'000'000, "worker \"1\"\n");
  const AllocId a2 = enc->alloc({worker, 4'000'000, 64, 0, 64, 1, Func::AlignedAlloc, bt_worker});
  enc->realloc(a0, {main, 5'000'000, 96, 0, 0, 1, Func::Realloc, bt_grow});
  enc->free(a1, main, 6'000'000, Func::DeleteArray);
  enc->marker(main, 7'000'000, "phase 2");
  enc->rss(8'000'000, 3 << 20);
  enc->free(a2, worker, 9'000'000, Func::Free);
  enc->thread_end(worker, 10'000'000);
  CallTotals totals{};
  totals.time_ns = 11'000'000;
  totals.totals[static_cast<unsigned>(Func::Malloc)] = {5, 300};
  totals.totals[static_cast<unsigned>(Func::Free)] = {3, 0};
  totals.totals[static_cast<unsigned>(Func::NewArray)] = {1, 10'000};
  totals.totals[static_cast<unsigned>(Func::Realloc)] = {1, 96};
  enc->call_totals(totals);
  enc->module_unload(12'000'000, 0x7f0000000000);
  enc->trace_end(13'000'000, EndReason::Exit);
  enc->flush();

  // 0x401030 has no symbols; 0x401010 is make_buffer inlined into main.
  SymbolsEncoder symbols;
  const SymbolFrame inlined[] = {{"make_buffer", "buf.h", 12, 3}, {"main", "main.cc", 20, 5}};
  const SymbolFrame run[] = {{"run", "main.cc", 30, 0}};
  const SymbolFrame start[] = {{"main", "main.cc", 40, 1}};
  const SymbolFrame reserve[] = {{"std::vector<int>::reserve(unsigned long)", "", 0, 0}};
  const SymbolFrame grow[] = {{"grow", "grow.c", 7, 9}};
  const SymbolFrame anonymous[] = {{"", "thread.c", 5, 2}};
  symbols.add(0x401010, inlined);
  symbols.add(0x401020, reserve);
  symbols.add(0x401040, grow);
  symbols.add(0x401100, run);
  symbols.add(0x401200, start);
  symbols.add(0x401300, anonymous);
  symbols.finish(bytes);
  return bytes;
}

// Dumps `trace` with the real binary and diffs it against tests/golden/`golden`.
void expect_golden(const std::string& trace, const std::string& golden) {
  const std::string dir = scratch_dir("golden_" + golden);
  const std::string actual = dir + "/" + golden;
  const std::string expected = source_path("tests/golden/" + golden);
  CommandRun dump = memloupe("dump '" + trace + "'");
  ASSERT_EQ(dump.status, 0) << dump.err;
  std::ofstream(actual, std::ios::binary) << dump.out;
  if (std::getenv("MEMLOUPE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(expected, std::ios::binary) << dump.out;
    GTEST_SKIP() << "updated " << expected;
  }
  if (dump.out == read_text(expected)) return;
  std::string diff;
  if (FILE* p = popen(("diff -u '" + expected + "' '" + actual + "'").c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) diff.append(buf, n);
    pclose(p);
  }
  ADD_FAILURE() << "memloupe dump differs from " << expected << ":\n" << diff;
}

TEST(Golden, SmallNativeTrace) {
  const std::string path = scratch_dir("small") + "/small.trace";
  const std::vector<uint8_t> bytes = small_trace();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                             static_cast<std::streamsize>(bytes.size()));
  expect_golden(path, "small.dump");
}

TEST(Golden, MemtraceSampleTrace) {
  expect_golden(source_path("tests/data/memtrace/viewer_test.ctf"), "viewer_test.dump");
}

}  // namespace
}  // namespace memloupe::inspect_testing
