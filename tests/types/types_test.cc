// `memloupe types` on typesprog (built by g++ and by clang++ at -O2 -g),
// recorded by the real preload library: exact counts per type under --all,
// sampled estimates whose 95% intervals hold the true counts, the stacks of
// one type cut by --depth and filtered by --min-count, and a damaged or
// missing types table.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "analysis/cli_runner.h"
#include "format/wire.h"
#include "reader/chunk_io.h"

namespace {

namespace fs = std::filesystem;
using memloupe::analysis_testing::quote;
using memloupe::analysis_testing::Result;
using memloupe::analysis_testing::run_memloupe;

// The sampled runs multiply typesprog's counts by this, so every type gets
// samples at one per 4 KiB. The seed makes the run reproducible; 95% intervals
// miss 1 time in 20 by design (seeds 1-6 held 47 of 48 of these intervals).
constexpr int kSampledMultiplier = 200;

const fs::path& dir() {
  static const fs::path d = fs::path(MEMLOUPE_BINARY_DIR) / "tests" / "types" / "scratch";
  return d;
}

Result memloupe(const std::string& args, const std::string& env = "") { return run_memloupe(dir(), args, env); }

// One JSON object of the "types" or "stacks" array: its scalar fields and
// intervals (the output's objects hold no nested objects).
struct Obj {
  std::string type;
  std::map<std::string, double> num;
  std::map<std::string, std::pair<double, double>> interval;
  std::map<std::string, std::string> text;
  std::vector<std::string> frames;
};

std::string unescape(std::string s) {
  for (size_t at; (at = s.find("\\u003c")) != std::string::npos;) s.replace(at, 6, "<");
  return s;
}

std::vector<Obj> objects(const std::string& json, const std::string& array) {
  std::vector<Obj> out;
  const size_t start = json.find("\"" + array + "\":[");
  if (start == std::string::npos) return out;
  std::string rest = json.substr(start);
  if (array == "types") rest = rest.substr(0, rest.find("],\"stacks\""));
  static const std::regex object(R"re(\{"type":"((?:[^"\\]|\\.)*)"([^{}]*)\})re");
  static const std::regex number(R"re("(\w+)":(-?[0-9.e+-]+))re");
  static const std::regex pair(R"re("(\w+)_interval":\[(-?[0-9.e+-]+),(-?[0-9.e+-]+)\])re");
  static const std::regex frames(R"re("frames":\[(.*)\])re");
  for (std::sregex_iterator it(rest.begin(), rest.end(), object), end; it != end; ++it) {
    Obj o;
    o.type = unescape((*it)[1]);
    const std::string body = (*it)[2];
    for (std::sregex_iterator n(body.begin(), body.end(), number); n != end; ++n) o.num[(*n)[1]] = std::stod((*n)[2]);
    for (std::sregex_iterator n(body.begin(), body.end(), pair); n != end; ++n)
      o.interval[(*n)[1]] = {std::stod((*n)[2]), std::stod((*n)[3])};
    static const std::regex field(R"re("(\w+)":"((?:[^"\\]|\\.)*)")re");
    for (std::sregex_iterator n(body.begin(), body.end(), field); n != end; ++n) o.text[(*n)[1]] = (*n)[2];
    std::smatch f;
    if (std::regex_search(body, f, frames)) {
      static const std::regex str(R"re("((?:[^"\\]|\\.)*)")re");
      const std::string list = f[1];
      for (std::sregex_iterator s(list.begin(), list.end(), str); s != end; ++s) o.frames.push_back(unescape((*s)[1]));
    }
    out.push_back(std::move(o));
  }
  return out;
}

// The row whose name matches `pattern` (a whole-name regex); fails if not exactly one.
const Obj* find(const std::vector<Obj>& rows, const std::string& pattern) {
  const std::regex re(pattern);
  const Obj* found = nullptr;
  for (const Obj& o : rows) {
    if (!std::regex_match(o.type, re)) continue;
    EXPECT_EQ(found, nullptr) << "two types match " << pattern;
    found = &o;
  }
  EXPECT_NE(found, nullptr) << "no type matches " << pattern;
  return found;
}

// What typesprog.cc creates per unit of its multiplier: name pattern (g++ and
// clang++ spell `const` and `long` differently), objects, blocks, live at the end.
struct Expected {
  const char* pattern;
  double count, blocks, live;
  const char* how;
};
const Expected kExpected[] = {
    {R"(typesprog::Point)", 100, 100, 60, "inlined-ctor"},
    {R"(typesprog::Record)", 50, 50, 50, "called-ctor"},
    {R"(typesprog::Shared)", 30, 30, 0, "make_shared"},
    {R"(typesprog::Poly)", 20, 20, 0, "(inlined-ctor,make_unique|inlined-ctor|make_unique)"},
    {R"(std::_Rb_tree_node<std::pair<(int const|const int), typesprog::Payload>>)", 40, 40, 0, ".*"},
    {R"(std::__detail::_Hash_node<std::pair<(long int const|const long), typesprog::Payload>, false>)", 60, 60, 0,
     ".*"},
    {R"(typesprog::Elem\[\])", 1000, 1, 0, "allocator"},
    {R"(typesprog::SpinLock)", 17, 17, 17, "inlined-ctor"},
};

const char* const kCompilers[] = {"gxx", "clangxx"};

std::string program(const std::string& compiler) {
  return std::string(MEMLOUPE_BINARY_DIR) + "/bin/typesprog_" + compiler;
}
std::string all_trace(const std::string& compiler) { return (dir() / ("all_" + compiler + ".trace")).string(); }
std::string sampled_trace(const std::string& compiler) {
  return (dir() / ("sampled_" + compiler + ".trace")).string();
}

class TypesCli : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    std::vector<std::string> traces;
    for (const char* c : kCompilers) {
      traces.push_back(fs::path(all_trace(c)).filename());
      traces.push_back(fs::path(sampled_trace(c)).filename());
    }
    memloupe::analysis_testing::record_once(dir(), traces, [] {
      for (const char* c : kCompilers) {
        ASSERT_EQ(memloupe("run --all -o " + quote(all_trace(c)) + " -- " + quote(program(c))).status, 0);
        const Result r = memloupe("run --every 4KiB -o " + quote(sampled_trace(c)) + " -- " + quote(program(c)) + " " +
                                      std::to_string(kSampledMultiplier),
                                  "MEMLOUPE_SEED=7");
        ASSERT_EQ(r.status, 0) << r.err;
      }
    });
  }
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    if (!fs::exists(program(GetParam()))) GTEST_SKIP() << program(GetParam()) << " was not built";
  }
};

// `memloupe types --json -n 0 TRACE`'s types, and each expected type's row
// (null, and a failure, when it is missing).
std::vector<Obj> all_types(const std::string& trace, Result& r) {
  r = memloupe("types --json -n 0 " + quote(trace));
  EXPECT_EQ(r.status, 0) << r.err;
  return objects(r.out, "types");
}
template <class Check>
void for_each_expected(const std::vector<Obj>& rows, Check check) {
  for (const Expected& x : kExpected) {
    if (const Obj* o = find(rows, x.pattern)) check(x, *o);
  }
}

TEST_P(TypesCli, ExactCountsPerTypeUnderAll) {
  Result r;
  const std::vector<Obj> rows = all_types(all_trace(GetParam()), r);
  for_each_expected(rows, [&](const Expected& x, const Obj& obj) {
    const Obj* o = &obj;
    EXPECT_EQ(o->num.at("count"), x.count) << x.pattern;
    EXPECT_EQ(o->num.at("blocks"), x.blocks) << x.pattern;
    EXPECT_EQ(o->num.at("live_count"), x.live) << x.pattern;
    EXPECT_TRUE(o->interval.empty()) << "an --all trace has no intervals";
    EXPECT_TRUE(std::regex_match(o->text.at("how"), std::regex(x.how))) << x.pattern << " typed by " << o->text.at("how");
  });
  // Every allocated byte is in one row, typed or not; the untyped ones are the
  // C library's and libstdc++'s own buffers (no DWARF for them here).
  double sum = 0, unknown = 0;
  for (const Obj& o : rows) {
    sum += o.num.at("bytes");
    if (o.type.starts_with("(unknown")) unknown += o.num.at("bytes");
  }
  const std::smatch total = [&] {
    std::smatch m;
    std::regex_search(r.out, m, std::regex(R"re("untyped_bytes":([0-9]+),"untyped_blocks":[0-9]+,"bytes":([0-9]+))re"));
    return m;
  }();
  ASSERT_EQ(total.size(), 3u) << r.out;
  EXPECT_EQ(sum, std::stod(total[2]));
  EXPECT_EQ(unknown, std::stod(total[1]));
}

TEST_P(TypesCli, StacksOfOneTypeAreCutByDepthAndFilteredByMinCount) {
  // Three callers of make_lock(): 10, 5 and 2 locks.
  Result r = memloupe("types --json --type typesprog::SpinLock --depth 2 --min-count 3 " + quote(all_trace(GetParam())));
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<Obj> stacks = objects(r.out, "stacks");
  ASSERT_EQ(stacks.size(), 2u) << r.out;
  EXPECT_EQ(stacks[0].num.at("count"), 10);
  EXPECT_EQ(stacks[1].num.at("count"), 5);
  EXPECT_EQ(stacks[0].num.at("bytes"), 10 * 16);
  ASSERT_EQ(stacks[0].frames.size(), 2u);
  EXPECT_EQ(stacks[0].frames[0], "typesprog::make_lock()");
  EXPECT_EQ(stacks[0].frames[1], "typesprog::locks_for_cache(int)");
  EXPECT_EQ(stacks[1].frames[1], "typesprog::locks_for_queue(int)");

  // Without the minimum the third caller appears; at depth 1 all merge into one.
  r = memloupe("types --json --type SpinLock --depth 2 " + quote(all_trace(GetParam())));
  stacks = objects(r.out, "stacks");
  ASSERT_EQ(stacks.size(), 3u) << r.out;
  EXPECT_EQ(stacks[2].num.at("count"), 2);
  EXPECT_EQ(stacks[2].frames[1], "typesprog::locks_for_log(int)");
  r = memloupe("types --json --type 'Spin.*' --depth 1 " + quote(all_trace(GetParam())));
  stacks = objects(r.out, "stacks");
  ASSERT_EQ(stacks.size(), 1u) << r.out;
  EXPECT_EQ(stacks[0].num.at("count"), 17);

  // The text view says the same.
  r = memloupe("types --type typesprog::SpinLock --depth 2 --min-count 3 " + quote(all_trace(GetParam())));
  EXPECT_NE(r.out.find("typesprog::SpinLock: 17 objects"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("locks_for_queue"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("locks_for_log"), std::string::npos) << r.out;
}

TEST_P(TypesCli, SampledEstimatesHoldTheTrueCountsInTheirIntervals) {
  Result r;
  for_each_expected(all_types(sampled_trace(GetParam()), r), [&](const Expected& x, const Obj& obj) {
    const Obj* o = &obj;
    const double truth = x.count * kSampledMultiplier;
    ASSERT_TRUE(o->interval.contains("count")) << x.pattern;
    const auto [lo, hi] = o->interval.at("count");
    EXPECT_LE(lo, truth) << x.pattern << " estimate " << o->num.at("count");
    EXPECT_GE(hi, truth) << x.pattern << " estimate " << o->num.at("count");
  });
}

TEST_P(TypesCli, SelectionOptionsApply) {
  // --at-end: what is live at the end, per type (Points: 60 of 100 survive).
  const Result r = memloupe("types --json -n 0 --at-end --live " + quote(all_trace(GetParam())));
  ASSERT_EQ(r.status, 0) << r.err;
  const Obj* p = find(objects(r.out, "types"), "typesprog::Point");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->num.at("count"), 60);
}

// A copy of the --all trace with one byte of its types chunk's payload flipped
// (or, with `drop`, without the chunk: a trace from before types existed).
std::string altered(const std::string& from, const std::string& name, bool drop) {
  std::ifstream in(from, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  const memloupe::reader::ChunkList list = memloupe::reader::scan_chunks(bytes);
  std::vector<uint8_t> out(bytes.begin(), bytes.begin() + memloupe::format::kPrologueSize);
  bool found = false;
  for (const auto& c : list.chunks) {
    const auto begin = bytes.begin() + static_cast<ptrdiff_t>(c.offset);
    const auto end = begin + static_cast<ptrdiff_t>(memloupe::format::kChunkHeaderSize + c.stored.size());
    const bool types = c.type == static_cast<uint8_t>(memloupe::format::ChunkType::Types);
    found |= types;
    if (types && drop) continue;
    const size_t at = out.size();
    out.insert(out.end(), begin, end);
    if (types) out[at + memloupe::format::kChunkHeaderSize + c.stored.size() / 2] ^= 0x55;
  }
  EXPECT_TRUE(found) << from << " has no types chunk";
  const std::string path = (dir() / name).string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size()));
  return path;
}

TEST_P(TypesCli, DamagedTypesChunkIsReportedAndTheRestAnalysed) {
  const std::string damaged = altered(all_trace(GetParam()), "damaged_" + GetParam() + ".trace", false);
  const Result r = memloupe("types " + quote(damaged));
  EXPECT_EQ(r.status, 4) << r.err;  // kDamaged
  EXPECT_NE(r.err.find("damaged types table"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("at offset"), std::string::npos) << r.err;
  // The events are intact: every block is still counted, as unknown.
  EXPECT_NE(r.out.find("(unknown, mixed sizes)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Typed: 0.0% of allocated bytes"), std::string::npos) << r.out;
  // The other views do not depend on the table: not damage for them.
  const Result summary = memloupe("summary " + quote(damaged));
  EXPECT_EQ(summary.status, 0) << summary.err;
}

TEST_P(TypesCli, TraceWithoutTypesTableStillReads) {
  const std::string old = altered(all_trace(GetParam()), "old_" + GetParam() + ".trace", true);
  Result r = memloupe("types " + quote(old));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("no types table"), std::string::npos) << r.out;
  EXPECT_EQ(memloupe("summary " + quote(old)).status, 0);
  // Finalising it again (with its binaries here) brings the table back.
  r = memloupe("symbolize --force " + quote(old));
  EXPECT_EQ(r.status, 0) << r.err;
  r = memloupe("types --json " + quote(old));
  const Obj* p = find(objects(r.out, "types"), "typesprog::Point");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->num.at("count"), 100);
}

// A shell command's stdout and stderr, and its exit status.
std::string output_of(const std::string& command, int& status) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) {
    status = -1;
    return out;
  }
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  status = pclose(p);
  return out;
}

TEST_P(TypesCli, HtmlReportAndPprofCarryTheTypes) {
  const std::string html = (dir() / ("report_" + GetParam() + ".html")).string();
  Result r = memloupe("report -o " + quote(html) + " " + quote(all_trace(GetParam())));
  ASSERT_EQ(r.status, 0) << r.err;
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), {});
  // [name, objects, bytes, [node, objects, bytes]...]: SpinLock's 17 objects, 272 bytes.
  EXPECT_NE(page.find(R"(["typesprog::SpinLock",17,272,[)"), std::string::npos);
  EXPECT_NE(page.find("id=\"types-panel\""), std::string::npos);
  // The page runs without a script error in a real browser (tests/report's checker).
  if (fs::exists("/usr/bin/chromium") && std::system("node --version >/dev/null 2>&1") == 0) {
    int status = 0;
    const std::string seen = output_of(
        "node " + quote(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/report/browser_check.mjs") + " " + quote(html),
        status);
    EXPECT_EQ(status, 0) << seen;
    EXPECT_NE(seen.find("errors=0\n"), std::string::npos) << seen;
  }

  const std::string pb = (dir() / ("profile_" + GetParam() + ".pb.gz")).string();
  r = memloupe("export --format pprof -o " + quote(pb) + " " + quote(all_trace(GetParam())));
  ASSERT_EQ(r.status, 0) << r.err;
  if (std::system("go version >/dev/null 2>&1") != 0) GTEST_SKIP() << "no go toolchain to read the profile";
  int status = 0;
  const std::string tags = output_of("go tool pprof -tags " + quote(pb), status);
  EXPECT_EQ(status, 0) << tags;
  // The sample label "type", by allocated bytes.
  EXPECT_TRUE(std::regex_search(tags, std::regex(R"(272\.0B .*: typesprog::SpinLock)"))) << tags;
  EXPECT_TRUE(std::regex_search(tags, std::regex(R"(2\.0kB .*: typesprog::Record)"))) << tags;
}

INSTANTIATE_TEST_SUITE_P(Compilers, TypesCli, ::testing::Values(std::string("gxx"), std::string("clangxx")));

}  // namespace
