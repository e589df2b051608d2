// The analysis commands end to end, on traces of programs/analysis_pattern.c
// recorded by the real `memloupe run`.
//
// Known answers (from the program; see its header):
//   site_temp    64 B × 20000 = 1,280,000 B, all freed at once by their thread
//   site_page  4096 B × 3000  = 12,288,000 B; 1500 never freed = 6,144,000 B
//   site_worker 1000 B × 2000 = 2,000,000 B on thread "worker", never freed
//   site_big  262144 B × 40   = 10,485,760 B, freed after the peak
// The peak is reached by the last site_big allocation: all pages, the worker's
// blocks and the big blocks are live then (24,773,760 B), plus whatever the C
// library holds (a few hundred bytes for the thread).
#include <gtest/gtest.h>

#include <cmath>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using memloupe::analysis_testing::quote;
using memloupe::analysis_testing::Result;
using memloupe::analysis_testing::run_memloupe;

constexpr double kTemp = 64.0 * 20000, kPage = 4096.0 * 3000, kPageLeaked = 4096.0 * 1500;
constexpr double kWorker = 1000.0 * 2000, kBig = 262144.0 * 40;
constexpr double kPeakKnown = kPage + kWorker + kBig;
constexpr double kLibcSlack = 4096;  // what the C library may hold besides our blocks
constexpr int kSeeds = 10;

const fs::path& dir() {
  static const fs::path d = fs::path(MEMLOUPE_BINARY_DIR) / "tests" / "analysis" / "scratch";
  return d;
}


Result memloupe(const std::string& args, const std::string& env = "") {
  return run_memloupe(dir(), args, env);
}

std::string trace(const std::string& name) { return quote((dir() / name).string()); }

// RFC 4180 rows as maps from the header's names.
using Row = std::map<std::string, std::string>;
std::vector<Row> parse_csv(const std::string& text) {
  std::vector<std::vector<std::string>> lines(1);
  std::string field;
  bool quoted = false, any = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c == '"') {
      quoted = any = true;
    } else if (c == ',') {
      lines.back().push_back(field);
      field.clear();
    } else if (c == '\n') {
      lines.back().push_back(field);
      field.clear();
      lines.emplace_back();
    } else {
      field += c;
    }
  }
  (void)any;
  lines.pop_back();  // after the last newline
  std::vector<Row> rows;
  for (size_t l = 1; l < lines.size(); ++l) {
    Row row;
    for (size_t c = 0; c < lines[0].size() && c < lines[l].size(); ++c) row[lines[0][c]] = lines[l][c];
    rows.push_back(row);
  }
  return rows;
}

double num(const Row& r, const std::string& key) {
  auto it = r.find(key);
  return it == r.end() || it->second.empty() ? -1 : std::stod(it->second);
}

// The innermost frame of a row's stack (the site's name at --depth 1).
std::string site(const Row& r) {
  for (const char* key : {"stack_innermost_first", "caller", "callee"}) {
    auto it = r.find(key);
    if (it != r.end()) return it->second.substr(0, it->second.find(';'));
  }
  return {};
}

std::map<std::string, Row> by_site(const std::vector<Row>& rows) {
  std::map<std::string, Row> out;
  for (const Row& r : rows) out[site(r)] = r;
  return out;
}

// `memloupe ARGS --csv`, as rows by site; fails the test on a non-zero exit.
std::map<std::string, Row> csv(const std::string& args) {
  const Result r = memloupe(args + " --csv");
  EXPECT_EQ(r.status, 0) << args << "\n" << r.err;
  return by_site(parse_csv(r.out));
}

class AnalysisCli : public ::testing::Test {
 protected:
  // ctest runs each test in its own process (possibly two at once): the traces
  // are recorded once, under a lock, and reused while newer than the binaries.
  static void SetUpTestSuite() {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    std::vector<std::string> traces = {"all.trace", "more.trace"};
    for (int seed = 1; seed <= kSeeds; ++seed) traces.push_back("s" + std::to_string(seed) + ".trace");
    memloupe::analysis_testing::record_once(dir(), traces, record_traces);
  }

  static void record_traces() {
    const std::string bin = std::string(MEMLOUPE_BINARY_DIR) + "/bin/";
    const std::string prog = quote(bin + "analysis_pattern");
    ASSERT_EQ(memloupe("run --all -o " + trace("all.trace") + " -- " + prog).status, 0);
    ASSERT_EQ(memloupe("run --all -o " + trace("more.trace") + " -- " + prog + " 4000").status, 0);
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const Result r = memloupe("run --every 64KiB -o " + trace("s" + std::to_string(seed) + ".trace") + " -- " + prog,
                                "MEMLOUPE_SEED=" + std::to_string(seed));
      ASSERT_EQ(r.status, 0) << r.err;
    }
  }
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
  }
};

void expect_site(const std::map<std::string, Row>& rows, const std::string& name, const std::string& metric,
                 double bytes, double blocks) {
  auto it = rows.find(name);
  ASSERT_NE(it, rows.end()) << name << " missing";
  EXPECT_EQ(num(it->second, metric + "_bytes"), bytes) << name;
  EXPECT_EQ(num(it->second, metric + "_blocks"), blocks) << name;
  // Exact mode: the interval is the value.
  EXPECT_EQ(num(it->second, metric + "_bytes_lo"), bytes) << name;
  EXPECT_EQ(num(it->second, metric + "_bytes_hi"), bytes) << name;
}

TEST_F(AnalysisCli, TopIsExactUnderAll) {
  const auto rows = csv("top --depth 1 " + trace("all.trace"));
  expect_site(rows, "site_page", "allocated", kPage, 3000);
  expect_site(rows, "site_big", "allocated", kBig, 40);
  expect_site(rows, "site_worker", "allocated", kWorker, 2000);
  expect_site(rows, "site_temp", "allocated", kTemp, 20000);
  // Ranked by bytes: page, big, worker, temp.
  EXPECT_EQ(num(rows.at("site_page"), "rank"), 1);
  EXPECT_EQ(num(rows.at("site_temp"), "rank"), 4);
  // By count, site_temp leads.
  EXPECT_EQ(num(csv("top --by count --depth 1 " + trace("all.trace")).at("site_temp"), "rank"), 1);
}

TEST_F(AnalysisCli, WholeStacksCarryTheCallChain) {
  const Result r = memloupe("top --frames 0 -n 4 " + trace("all.trace"));
  ASSERT_EQ(r.status, 0);
  const size_t at = r.out.find("site_big");
  ASSERT_NE(at, std::string::npos) << r.out;
  const size_t phase = r.out.find("← phase_big", at), main = r.out.find("← main", at);
  EXPECT_NE(phase, std::string::npos) << r.out;
  EXPECT_LT(phase, main);
}

TEST_F(AnalysisCli, PeakAndLeaks) {
  const auto peak = csv("top --by peak --depth 1 " + trace("all.trace"));
  expect_site(peak, "site_page", "peak", kPage, 3000);
  expect_site(peak, "site_big", "peak", kBig, 40);
  expect_site(peak, "site_worker", "peak", kWorker, 2000);
  EXPECT_EQ(peak.count("site_temp"), 0u);  // none live at the peak

  for (const std::string cmd : {"leaks --depth 1 ", "top --by leaked --depth 1 ", "top --at-end --depth 1 "}) {
    const auto leaks = csv(cmd + trace("all.trace"));
    const std::string metric = cmd[0] == 'l' || cmd.find("leaked") != std::string::npos ? "leaked" : "allocated";
    expect_site(leaks, "site_page", metric, kPageLeaked, 1500);
    expect_site(leaks, "site_worker", metric, kWorker, 2000);
    EXPECT_EQ(leaks.count("site_big"), 0u) << cmd;
    EXPECT_EQ(leaks.count("site_temp"), 0u) << cmd;
  }
  // --at-peak selects by time what was live at the peak's instant.
  const auto at_peak = csv("top --at-peak --depth 1 " + trace("all.trace"));
  expect_site(at_peak, "site_big", "allocated", kBig, 40);
  expect_site(at_peak, "site_page", "allocated", kPage, 3000);
}

TEST_F(AnalysisCli, TimelineHasThePeakAndEndsWithTheLeaks) {
  const Result r = memloupe("timeline --csv " + trace("all.trace"));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<Row> rows = parse_csv(r.out);
  ASSERT_GT(rows.size(), 10u);
  ASSERT_LE(rows.size(), 2048u);
  double max = 0, allocated = 0, freed = 0;
  for (const Row& row : rows) {
    max = std::max(max, num(row, "live_max_bytes"));
    allocated += num(row, "allocated_bytes");
    freed += num(row, "freed_bytes");
  }
  EXPECT_GE(max, kPeakKnown);
  EXPECT_LE(max, kPeakKnown + kLibcSlack);
  const double leaked = num(rows.back(), "live_bytes");
  EXPECT_GE(leaked, kPageLeaked + kWorker);
  EXPECT_LE(leaked, kPageLeaked + kWorker + kLibcSlack);
  EXPECT_EQ(allocated - freed, leaked);
  EXPECT_GE(allocated, kTemp + kPage + kWorker + kBig);

  const Result chart = memloupe("timeline --width 60 --height 6 " + trace("all.trace"));
  ASSERT_EQ(chart.status, 0);
  EXPECT_NE(chart.out.find("▲ peak 23.6 MiB at"), std::string::npos) << chart.out;
  EXPECT_NE(chart.out.find("█"), std::string::npos);
}

TEST_F(AnalysisCli, Filters) {
  const std::string all = trace("all.trace");
  auto only = [](const std::map<std::string, Row>& rows, const std::string& name) {
    EXPECT_EQ(rows.size(), 1u) << "expected only " << name;
    return rows.count(name) == 1;
  };
  // The worker is memloupe's thread 1 (the main thread is 0).
  const Result summary = memloupe("summary " + all);
  ASSERT_NE(summary.out.find("Threads      2: analysis_patter"), std::string::npos) << summary.out;
  ASSERT_LT(summary.out.find("analysis_patter"), summary.out.find("worker"));
  auto worker = csv("top --depth 1 --thread 1 " + all);
  worker.erase("calloc");  // the C library's own allocation for the new thread, if traced there
  if (only(worker, "site_worker")) expect_site(worker, "site_worker", "allocated", kWorker, 2000);

  const auto pages = csv("top --depth 1 --min-size 4KiB --max-size 4KiB " + all);
  if (only(pages, "site_page")) expect_site(pages, "site_page", "allocated", kPage, 3000);

  const auto focus = csv("top --depth 1 --focus phase_big " + all);
  if (only(focus, "site_big")) expect_site(focus, "site_big", "allocated", kBig, 40);

  // Hiding the site_ frames makes the callers the sites.
  const auto hidden = csv("top --depth 1 --hide site_ " + all);
  expect_site(hidden, "phase_pages", "allocated", kPage, 3000);
  expect_site(hidden, "phase_temporaries", "allocated", kTemp, 20000);
  EXPECT_EQ(hidden.count("site_page"), 0u);

  // Freed within the whole trace: the temporaries, the big blocks, half the pages.
  const auto freed = csv("top --depth 1 --between 0% 100% --freed " + all);
  expect_site(freed, "site_temp", "allocated", kTemp, 20000);
  expect_site(freed, "site_big", "allocated", kBig, 40);
  expect_site(freed, "site_page", "allocated", kPage - kPageLeaked, 1500);
  EXPECT_EQ(freed.count("site_worker"), 0u);

  // Blocks living at least 1 s: none (the program runs for well under a second).
  const Result none = memloupe("top --min-lifetime 1s --depth 1 --csv " + all);
  EXPECT_EQ(parse_csv(none.out).size(), 0u) << none.out;
}

TEST_F(AnalysisCli, CallersAndCallees) {
  const auto callers = csv("top --callers site_page " + trace("all.trace"));
  ASSERT_EQ(callers.size(), 1u);
  expect_site(callers, "phase_pages", "allocated", kPage, 3000);
  const auto callees = csv("top --callees main " + trace("all.trace"));
  expect_site(callees, "phase_pages", "allocated", kPage, 3000);
  expect_site(callees, "phase_big", "allocated", kBig, 40);
  expect_site(callees, "phase_temporaries", "allocated", kTemp, 20000);
  // The worker's allocations run on its own thread, whose stacks start elsewhere;
  // phase_worker holds only what pthread_create allocates in the C library.
  if (callees.count("phase_worker")) {
    EXPECT_LE(num(callees.at("phase_worker"), "allocated_bytes"), kLibcSlack);
  }
}

TEST_F(AnalysisCli, LifetimesAndTemporaries) {
  const auto temp = csv("top --by temporary --blocks --depth 1 " + trace("all.trace"));
  ASSERT_EQ(temp.count("site_temp"), 1u);
  // Each is freed right after its allocation; a rare preemption on a busy
  // machine may stretch one past the 10 µs threshold, so allow 5%.
  EXPECT_GE(num(temp.at("site_temp"), "temporary_blocks"), 19000);
  EXPECT_LE(num(temp.at("site_temp"), "temporary_blocks"), 20000);
  EXPECT_EQ(temp.count("site_page"), 0u);
  EXPECT_EQ(temp.count("site_big"), 0u);

  const Result r = memloupe("lifetimes --csv " + trace("all.trace"));
  ASSERT_EQ(r.status, 0);
  const std::vector<Row> rows = parse_csv(r.out);
  ASSERT_FALSE(rows.empty());
  const Row& never = rows.back();
  EXPECT_EQ(never.at("lifetime_min_ns"), "");
  EXPECT_GE(num(never, "bytes"), kPageLeaked + kWorker);
  EXPECT_LE(num(never, "bytes"), kPageLeaked + kWorker + kLibcSlack);
  double blocks = 0;
  for (const Row& row : rows) blocks += num(row, "blocks");
  EXPECT_GE(blocks, 20000 + 3000 + 2000 + 40);
}

TEST_F(AnalysisCli, DiffFindsTheGrownSite) {
  // more.trace ran with 4000 pages: 1000 more (500 more leaked).
  const auto rows = csv("diff --depth 1 " + trace("all.trace") + " " + trace("more.trace"));
  ASSERT_EQ(rows.count("site_page"), 1u);
  const Row& page = rows.at("site_page");
  EXPECT_EQ(num(page, "a_allocated_bytes"), kPage);
  EXPECT_EQ(num(page, "b_allocated_bytes"), 4096.0 * 4000);
  EXPECT_EQ(num(page, "change_bytes"), 4096.0 * 1000);
  EXPECT_EQ(num(page, "change_blocks"), 1000);
  for (const char* unchanged : {"site_temp", "site_big", "site_worker"}) EXPECT_EQ(rows.count(unchanged), 0u);
  const auto leaked = csv("diff --by leaked --depth 1 " + trace("all.trace") + " " + trace("more.trace"));
  EXPECT_EQ(num(leaked.at("site_page"), "change_bytes"), 4096.0 * 500);
}

TEST_F(AnalysisCli, SummaryAgreesWithTheCounters) {
  const Result r = memloupe("summary " + trace("all.trace"));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("every call recorded (--all)"), std::string::npos);
  // Exact per-function counts: at least the program's 25,040 mallocs.
  const size_t malloc_row = r.out.find("\nmalloc ");
  ASSERT_NE(malloc_row, std::string::npos) << r.out;
  std::istringstream row(r.out.substr(malloc_row + 1));
  std::string name, calls;
  row >> name >> calls;
  calls.erase(std::remove(calls.begin(), calls.end(), ','), calls.end());
  EXPECT_GE(std::stoll(calls), 25040);
  // In --all mode the counters and the events agree: "Total N allocating calls"
  // and "Allocated X in N blocks".
  const size_t total = r.out.find("Total        ");
  const size_t allocated = r.out.find("Allocated    ");
  ASSERT_NE(total, std::string::npos);
  ASSERT_NE(allocated, std::string::npos);
  const std::string n_calls = r.out.substr(total + 13, r.out.find(' ', total + 13) - total - 13);
  EXPECT_NE(r.out.find(" in " + n_calls + " blocks", allocated), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Peak heap    23.6 MiB"), std::string::npos);
  EXPECT_NE(r.out.find("Leaked       7.77 MiB"), std::string::npos);  // 8,144,000 B + the C library's
  EXPECT_NE(r.out.find("Top 10 sites by leaked bytes"), std::string::npos);
}

// The sampled traces: the exact values (from the program) lie inside the 95%
// intervals. Per seed there are five distinct sets of blocks (four sites, and
// the leaked half of site_page; the worker's leaks are its allocations), each
// checked for bytes and for blocks. At 95% coverage the misses out of 50 sets
// are about Binomial(50, 0.05): 11 or more happen with probability < 10^-4, so
// we require 40 of 50 for each measure. The seeds are fixed: the run is
// reproducible.
TEST_F(AnalysisCli, SampledIntervalsCoverTheExactValues) {
  int sets = 0, bytes_covered = 0, blocks_covered = 0;
  auto check = [&](const Row& r, const std::string& metric, double bytes, double blocks) {
    ++sets;
    bytes_covered += num(r, metric + "_bytes_lo") <= bytes && bytes <= num(r, metric + "_bytes_hi");
    // An empty upper bound is "none known" (a set of large, near-certain samples:
    // estimate.h), which any count is within.
    const double blocks_hi = r.at(metric + "_blocks_hi").empty() ? INFINITY : num(r, metric + "_blocks_hi");
    blocks_covered += num(r, metric + "_blocks_lo") <= blocks && blocks <= blocks_hi;
    EXPECT_LT(num(r, metric + "_bytes_lo"), num(r, metric + "_bytes_hi"));  // a real interval
  };
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const std::string t = trace("s" + std::to_string(seed) + ".trace");
    const auto top = csv("top --depth 1 " + t);
    for (auto [name, bytes, blocks] : {std::tuple{"site_page", kPage, 3000.0}, std::tuple{"site_big", kBig, 40.0},
                                       std::tuple{"site_worker", kWorker, 2000.0},
                                       std::tuple{"site_temp", kTemp, 20000.0}}) {
      ASSERT_EQ(top.count(name), 1u) << name << " seed " << seed;
      check(top.at(name), "allocated", bytes, blocks);
    }
    const auto leaks = csv("leaks --depth 1 " + t);
    ASSERT_EQ(leaks.count("site_page"), 1u);
    check(leaks.at("site_page"), "leaked", kPageLeaked, 1500);
  }
  EXPECT_EQ(sets, kSeeds * 5);
  EXPECT_GE(bytes_covered, sets * 4 / 5) << bytes_covered << " of " << sets;
  EXPECT_GE(blocks_covered, sets * 4 / 5) << blocks_covered << " of " << sets;
  std::printf("sampled intervals covered the exact bytes of %d and blocks of %d of %d sets\n", bytes_covered,
              blocks_covered, sets);
}

TEST_F(AnalysisCli, ExitCodesAndDamage) {
  EXPECT_EQ(memloupe("summary " + trace("missing.trace")).status, 2);
  {
    std::ofstream junk(dir() / "junk.trace");  // (only this test writes it)
    junk << "this is not a trace";
  }
  EXPECT_EQ(memloupe("top " + trace("junk.trace")).status, 3);
  // A trace cut in the middle: what was read is reported, and the exit code says so.
  const fs::path whole = dir() / "all.trace", cut = dir() / "cut.trace";
  fs::copy_file(whole, cut, fs::copy_options::overwrite_existing);
  fs::resize_file(cut, fs::file_size(whole) / 2);
  const Result r = memloupe("summary " + trace("cut.trace"));
  EXPECT_EQ(r.status, 4) << r.err;
  EXPECT_NE(r.out.find("Allocated"), std::string::npos);
  EXPECT_NE(r.err.find("cut.trace"), std::string::npos);
}

TEST_F(AnalysisCli, ProgressOnlyOnATerminal) {
  const Result piped = memloupe("summary " + trace("all.trace"));
  EXPECT_EQ(piped.err.find("analysing"), std::string::npos) << piped.err;
  // `script` gives the command a terminal. The bar shows reading the events,
  // so not from the analysis index.
  if (std::system("command -v script >/dev/null 2>&1") != 0) GTEST_SKIP() << "script(1) not installed";
  const std::string command = "script -qec " +
                              quote(std::string(MEMLOUPE_BINARY_DIR) + "/bin/memloupe summary --no-index " +
                                    (dir() / "all.trace").string()) +
                              " /dev/null";
  FILE* p = popen(command.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  EXPECT_EQ(pclose(p), 0);
  EXPECT_NE(out.find("analysing"), std::string::npos) << out;
}

}  // namespace
