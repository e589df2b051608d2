// `memloupe report` and `memloupe export` end to end: a trace with known answers
// is written with the real encoder (and a symbols section), the CLI turns it
// into each format, and the real tools read the result.
//
// The trace (--all mode, so every answer is exact); times in ms:
//   main > make_widgets > Widget::Widget (inlined)   10 x 100 B at 1.05, 1.15, ... 1.95;
//                                                     the first 8 freed at 3.05 ... 3.75
//   main > load_config                                5 x 1000 B at 2.05 ... 2.45; freed at 3.55 ... 3.95
//   main > load_config > parse_token                  3 x 100 B at 4.05, 4.15, 4.25; never freed
//   end at 5 ms.
// So: allocated 6300 B in 18 blocks; the peak is 6000 B at 2.45 ms (widgets 1000 +
// config 5000); leaked 500 B in 5 blocks (2 widgets + 3 tokens).
#include <gtest/gtest.h>

#include <fstream>
#include <memory>

#include "format/encoder.h"
#include "format/symbols_encoder.h"
#include "reader/reader.h"
#include "tool_runner.h"

namespace memloupe::report {
namespace {

using testing::run;

constexpr uint64_t kMain = 0x401010, kWidgets = 0x401100, kConfig = 0x401200, kToken = 0x401300;
constexpr uint64_t kMs = 1'000'000;

class VectorSink final : public format::ChunkSink {
 public:
  explicit VectorSink(std::vector<uint8_t>& out) : out_(out) {}
  void write_chunk(std::span<const uint8_t> chunk) noexcept override {
    out_.insert(out_.end(), chunk.begin(), chunk.end());
  }

 private:
  std::vector<uint8_t>& out_;
};

std::string write_trace(const std::string& dir) {
  std::vector<uint8_t> bytes(format::kMaxFileHeader);
  format::HeaderFields header;
  header.mode = format::Mode::All;
  header.pid = 4242;
  header.start_wall_ns = 1'700'000'000'000'000'000;
  header.host = "testhost";
  header.executable = "/usr/bin/widgets";
  header.argv_nul_separated = std::string_view("/usr/bin/widgets\0--fast\0", 24);
  bytes.resize(format::encode_file_header(header, bytes));

  VectorSink sink(bytes);
  auto encoder = std::make_unique<format::Encoder>(sink, format::Mode::All);  // 400 KiB: not on the stack
  auto alloc = [&](uint64_t t, uint64_t size, std::vector<uint64_t> stack) {
    format::AllocRecord r;
    r.time_ns = t;
    r.size = size;
    r.address = 0x10000 + t;
    r.backtrace = stack;
    return encoder->alloc(r);
  };
  auto free = [&](format::AllocId id, uint64_t t) { encoder->free(id, format::ThreadId{0}, t, format::Func::Free); };
  encoder->thread_start(format::ThreadId{0}, 0, 4242);
  encoder->rss(0, 1'000'000);
  std::vector<format::AllocId> widgets, config;
  for (uint64_t i = 0; i < 10; ++i) widgets.push_back(alloc(1 * kMs + 50'000 + i * 100'000, 100, {kWidgets, kMain}));
  for (uint64_t i = 0; i < 5; ++i) config.push_back(alloc(2 * kMs + 50'000 + i * 100'000, 1000, {kConfig, kMain}));
  encoder->rss(2'500'000, 1'200'000);
  encoder->marker(format::ThreadId{0}, 3 * kMs, "phase 2");
  for (uint64_t i = 0; i < 8; ++i) free(widgets[i], 3 * kMs + 50'000 + i * 100'000);
  for (uint64_t i = 0; i < 5; ++i) free(config[i], 3 * kMs + 550'000 + i * 100'000);
  for (uint64_t i = 0; i < 3; ++i) alloc(4 * kMs + 50'000 + i * 100'000, 100, {kToken, kConfig, kMain});
  encoder->rss(5 * kMs, 1'100'000);
  encoder->trace_end(5 * kMs, format::EndReason::Exit);
  encoder->flush();

  format::SymbolsEncoder symbols;
  const format::SymbolFrame main_f[] = {{"main", "widgets.cc", 50, 3}};
  const format::SymbolFrame widgets_f[] = {{"Widget::Widget", "widget.h", 7, 0}, {"make_widgets", "widgets.cc", 20, 0}};
  const format::SymbolFrame config_f[] = {{"load_config", "widgets.cc", 30, 0}};
  const format::SymbolFrame token_f[] = {{"parse_token", "widgets.cc", 40, 0}};
  symbols.add(kMain, main_f);
  symbols.add(kWidgets, widgets_f);
  symbols.add(kConfig, config_f);
  symbols.add(kToken, token_f);
  symbols.finish(bytes);

  std::string path = dir + "/widgets.trace";
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                              static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::string memloupe() { return std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe"; }

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    trace_ = write_trace(dir_);
  }
  int memloupe_run(const std::string& args) {
    return run("'" + memloupe() + "' " + args + " 2>'" + dir_ + "/stderr'").status;
  }
  std::string dir_, trace_;
};

TEST_F(Cli, FoldedLineByLine) {
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format folded -o '" + dir_ + "/a.folded'"), 0)
      << slurp(dir_ + "/stderr");
  EXPECT_EQ(slurp(dir_ + "/a.folded"),
            "main;load_config 5000\n"
            "main;load_config;parse_token 300\n"
            "main;make_widgets;Widget::Widget 1000\n");
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format folded --metric leaked -o '" + dir_ + "/l.folded'"), 0);
  EXPECT_EQ(slurp(dir_ + "/l.folded"),
            "main;load_config;parse_token 300\n"
            "main;make_widgets;Widget::Widget 200\n");
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format folded --metric count -o -"), 0);
  // Selection: blocks allocated between 1.5 and 2.2 ms: widgets 5..9 and config 0..1.
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --allocated --between 1.5ms 2.2ms --format folded -o '" +
                         dir_ + "/w.folded'"), 0) << slurp(dir_ + "/stderr");
  EXPECT_EQ(slurp(dir_ + "/w.folded"),
            "main;load_config 2000\n"
            "main;make_widgets;Widget::Widget 500\n");
}

TEST_F(Cli, PprofOpensInGoToolPprof) {
  if (!testing::on_path("go")) GTEST_SKIP() << "go (Debian golang-go) is not installed";
  std::string file = dir_ + "/heap.pb.gz";
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format pprof -o '" + file + "'"), 0) << slurp(dir_ + "/stderr");
  testing::Run alloc = run("go tool pprof -top -unit=B -sample_index=alloc_space '" + file + "' 2>/dev/null");
  ASSERT_EQ(alloc.status, 0);
  EXPECT_NE(alloc.out.find("Showing nodes accounting for 6300B, 100% of 6300B total"), std::string::npos) << alloc.out;
  EXPECT_NE(alloc.out.find("5000B 79.37% 79.37%      5300B 84.13%  load_config"), std::string::npos) << alloc.out;
  EXPECT_NE(alloc.out.find("1000B 15.87% 95.24%      1000B 15.87%  Widget::Widget (inline)"), std::string::npos);
  // In use = live in the live window: by default the peak (6000 B) ...
  testing::Run peak = run("go tool pprof -top -unit=B -sample_index=inuse_space '" + file + "' 2>/dev/null");
  EXPECT_NE(peak.out.find("accounting for 6000B, 100% of 6000B total"), std::string::npos) << peak.out;
  // ... and with --at-end, what was never freed.
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --at-end --format pprof -o '" + file + "'"), 0);
  testing::Run end = run("go tool pprof -top -unit=B -sample_index=inuse_space '" + file + "' 2>/dev/null");
  EXPECT_NE(end.out.find("accounting for 500B, 100% of 500B total"), std::string::npos) << end.out;
  EXPECT_NE(end.out.find("300B 60.00% 60.00%       300B 60.00%  parse_token"), std::string::npos) << end.out;
}

TEST_F(Cli, MassifOpensInMsPrint) {
  if (!testing::on_path("ms_print")) GTEST_SKIP() << "ms_print (Debian valgrind) is not installed";
  std::string file = dir_ + "/massif.out";
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format massif -o '" + file + "'"), 0) << slurp(dir_ + "/stderr");
  testing::Run r = run("ms_print '" + file + "' 2>&1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("Command:            /usr/bin/widgets --fast"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(peak)"), std::string::npos);
  EXPECT_NE(r.out.find("100.00% (6,000B) (heap allocation functions)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("->83.33% (5,000B) 0x401200: load_config (widgets.cc:30)"), std::string::npos) << r.out;
}

TEST_F(Cli, MemtraceReadBackByMemloupe) {
  std::string file = dir_ + "/trace.ctf";
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format memtrace -o '" + file + "'"), 0) << slurp(dir_ + "/stderr");
  auto reader = reader::Reader::open(file);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_NE((*reader)->info().source_format.find("memtrace"), std::string::npos);
  uint64_t allocs = 0, frees = 0, bytes = 0;
  std::vector<size_t> depths;
  while (const format::Event* e = (*reader)->next()) {
    if (const auto* a = std::get_if<format::Alloc>(e)) {
      ++allocs;
      bytes += a->size;
      depths.push_back(a->backtrace.size());
    }
    if (std::holds_alternative<format::Free>(*e)) ++frees;
  }
  EXPECT_FALSE((*reader)->error()) << (*reader)->error()->message;
  EXPECT_EQ(allocs, 18u);
  EXPECT_EQ(frees, 13u);
  // memtrace counts 8-byte words: 100 B is 13 words (104 B), 1000 B is 125 words.
  EXPECT_EQ(bytes, 10u * 104 + 5u * 1000 + 3u * 104);
  // The symbols went along: the reader names the allocation sites.
  bool named = false;
  for (const auto& [address, frames] : (*reader)->symbols()) {
    for (const auto& f : frames) named = named || f.function == "load_config";
  }
  EXPECT_TRUE(named);
}

// An every-call trace exported to memtrace reads back as an every-call trace:
// exact block counts, no intervals (it read back as a sampled trace at 8 bytes
// per sample: 46.9k [46.8k, 47.1k] blocks against a true 42,512). What CTF cannot
// carry is said on stderr at export, and the read-back does not call a trace
// without an end record "killed".
TEST_F(Cli, MemtraceExportOfAnEveryCallTraceReadsBackExact) {
  const std::string file = dir_ + "/every.ctf";
  ASSERT_EQ(memloupe_run("export '" + trace_ + "' --format memtrace -o '" + file + "'"), 0) << slurp(dir_ + "/stderr");
  const std::string said = slurp(dir_ + "/stderr");
  for (const char* lost : {"not carried", "RSS", "marker", "end record"}) {
    EXPECT_NE(said.find(lost), std::string::npos) << lost << " in:\n" << said;
  }
  auto reader = reader::Reader::open(file);
  ASSERT_TRUE(reader.ok()) << reader.error().message;
  EXPECT_EQ((*reader)->info().mode, format::Mode::All);
  const testing::Run r = run("'" + memloupe() + "' summary '" + file + "' 2>/dev/null");
  ASSERT_EQ(r.status, 0);
  const std::string& summary = r.out;
  EXPECT_NE(summary.find(" in 18 blocks"), std::string::npos) << summary;
  // No intervals: every call is there.
  const std::string allocated = summary.substr(summary.find("Allocated"), summary.find("Leaked") - summary.find("Allocated"));
  EXPECT_EQ(allocated.find('['), std::string::npos) << summary;
  EXPECT_EQ(summary.find("killed"), std::string::npos) << summary;
}

TEST_F(Cli, ReportOpensInChromiumAndARangeChangesTheNumbers) {
  std::string html = dir_ + "/report.html";
  ASSERT_EQ(memloupe_run("report '" + trace_ + "' -o '" + html + "'"), 0) << slurp(dir_ + "/stderr");
  EXPECT_GT(slurp(html).size(), 10'000u);
  const char* env = std::getenv("MEMLOUPE_CHROMIUM");
  std::string chromium = env ? env : "/usr/bin/chromium";
  if (!testing::executable(chromium)) GTEST_SKIP() << "no chromium at " << chromium;
  if (!testing::on_path("node")) GTEST_SKIP() << "node is not installed (Debian nodejs)";
  std::string script = std::string(MEMLOUPE_SOURCE_DIR) + "/tests/report/browser_check.mjs";
  testing::Run r = run("node '" + script + "' '" + html + "' --chromium '" + chromium + "'");
  ASSERT_EQ(r.status, 0) << r.out;
  auto kv = testing::key_values(r.out);
  EXPECT_EQ(kv["errors"], "0") << kv["error"];
  EXPECT_GT(std::stol(kv["flame_inked"]), 1000);
  EXPECT_GT(std::stol(kv["timeline_inked"]), 1000);
  EXPECT_EQ(kv["before.allocated"], "6300");
  EXPECT_EQ(kv["before.allocations"], "18");
  EXPECT_EQ(kv["before.peak"], "6000");
  EXPECT_EQ(kv["before.leaked"], "500");
  // The drag covers 30%..62% of 5 ms (1.5..3.1 ms), snapped to the series'
  // buckets of 2^16 ns (analysis::series_width; 50 µs before 2026-11-26):
  // buckets 22..47, 1.442..3.146 ms: widgets 4..9 (2 of them never freed) and
  // all of config.
  EXPECT_EQ(kv["after.allocated"], "5600");
  EXPECT_EQ(kv["after.allocations"], "11");
  EXPECT_EQ(kv["after.leaked"], "200");
  EXPECT_EQ(kv["after.peak"], "6000");
  EXPECT_EQ(kv["cleared.allocated"], "6300");
}

TEST_F(Cli, BadInputsGiveTheSharedExitCodes) {
  EXPECT_EQ(memloupe_run("report '" + dir_ + "/missing.trace' -o '" + dir_ + "/x.html'"), 2);
  std::ofstream(dir_ + "/not-a-trace") << "hello";
  EXPECT_EQ(memloupe_run("export '" + dir_ + "/not-a-trace' --format folded -o -"), 3);
  EXPECT_NE(memloupe_run("export '" + trace_ + "' --format svg -o -"), 0);
  EXPECT_EQ(memloupe_run("export '" + trace_ + "' --format folded --metric bogus -o -"), 1);
}

}  // namespace
}  // namespace memloupe::report
