// The analysis index (src/analysis/index.h) end to end, on traces of
// programs/analysis_pattern.c recorded and finalised by the real `memloupe run`:
// every view prints the same bytes from the index as from the events; a
// damaged, garbage or stale index is ignored with one warning and the same
// output; queries the index does not answer are streamed; re-finalising
// replaces the index; the event readers step over it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "analysis/index.h"
#include "analysis/model.h"
#include "format/chunk.h"
#include "format/varint.h"
#include "format/wire.h"
#include "reader/chunk_io.h"
#include "cli_runner.h"

namespace {

namespace fs = std::filesystem;
using memloupe::analysis_testing::quote;
using memloupe::analysis_testing::read_file;
using memloupe::analysis_testing::Result;
using memloupe::analysis_testing::run_memloupe;
using memloupe::analysis_testing::write_file;
using namespace memloupe;

const fs::path& dir() {
  static const fs::path d = fs::path(MEMLOUPE_BINARY_DIR) / "tests" / "analysis" / "index_scratch";
  return d;
}

std::string path(const std::string& name) { return (dir() / name).string(); }

Result memloupe(const std::string& args, const std::string& env = "") {
  return run_memloupe(dir(), args, env);
}


std::vector<reader::ChunkView> index_chunks(const std::vector<uint8_t>& file) {
  std::vector<reader::ChunkView> out;
  for (const reader::ChunkView& c : reader::scan_chunks(file).chunks)
    if (c.type == static_cast<uint8_t>(format::ChunkType::AnalysisIndex)) out.push_back(c);
  return out;
}

// The trace without its index chunk (which is last), and that chunk.
std::vector<uint8_t> strip_index(const std::vector<uint8_t>& file) {
  const auto chunks = index_chunks(file);
  if (chunks.empty()) return file;
  return {file.begin(), file.begin() + static_cast<ptrdiff_t>(chunks.back().offset)};
}

// The index chunk's raw (decompressed) payload.
std::vector<uint8_t> index_payload(const std::vector<uint8_t>& file) {
  const auto chunks = index_chunks(file);
  if (chunks.empty()) return {};
  std::vector<uint8_t> buffer;
  auto payload = reader::chunk_payload(chunks.back(), buffer);
  return payload ? std::vector<uint8_t>(payload->begin(), payload->end()) : std::vector<uint8_t>{};
}

// The commands whose output must not depend on where the model came from.
const std::vector<std::string> kViews = {
    "summary",         "summary --hide site_temp", "top",      "top --by peak --depth 1 --csv",
    "top --callers site_page", "leaks --csv",      "lifetimes", "timeline",
    "timeline --csv",  "top --by temporary", "lifetimes --temporary 10us --csv"};

class AnalysisIndex : public ::testing::Test {
 protected:
  // ctest runs each test in its own process: record once per build, under a lock.
  static void SetUpTestSuite() {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    memloupe::analysis_testing::record_once(dir(), {"all.trace", "sampled.trace", "all_us.trace"}, record_traces);
  }
  static void record_traces() {
    const std::string bin = std::string(MEMLOUPE_BINARY_DIR) + "/bin/";
    const std::string prog = quote(bin + "analysis_pattern");
    // --index: the program's few thousand events get none by default (index.h).
    Result r = memloupe("run --all --index -o " + quote(path("all.trace")) + " -- " + prog);
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("memloupe: analysis index: "), std::string::npos) << r.err;
    r = memloupe("run --every 64KiB --index -o " + quote(path("sampled.trace")) + " -- " + prog, "MEMLOUPE_SEED=7");
    ASSERT_EQ(r.status, 0) << r.err;
    // The same program with --all's times in µs, as before format version 2.
    r = memloupe("run --all --time-unit 1 --index -o " + quote(path("all_us.trace")) + " -- " + prog);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
  }

  // Every view, and the HTML report, with and without --no-index on `trace`:
  // same bytes, same exit code; `warning` is expected on stderr of the indexed
  // runs (empty: nothing at all).
  static void expect_same_views(const std::string& trace, const std::string& warning = "") {
    const std::string t = quote(path(trace));
    for (const std::string& view : kViews) {
      const Result indexed = memloupe(view + " " + t);
      const Result streamed = memloupe(view + " --no-index " + t);
      EXPECT_EQ(indexed.status, 0) << view << "\n" << indexed.err;
      EXPECT_EQ(indexed.status, streamed.status) << view;
      EXPECT_EQ(indexed.out, streamed.out) << view << " on " << trace;
      EXPECT_EQ(streamed.err, "") << view;
      if (warning.empty()) {
        EXPECT_EQ(indexed.err, "") << view;
      } else {
        EXPECT_NE(indexed.err.find(warning), std::string::npos) << view << "\n" << indexed.err;
        // One line: the warning, nothing else.
        EXPECT_EQ(std::count(indexed.err.begin(), indexed.err.end(), '\n'), 1) << indexed.err;
      }
    }
    const std::string a = path(trace + ".a.html"), b = path(trace + ".b.html");
    ASSERT_EQ(memloupe("report " + t + " -o " + quote(a)).status, 0);
    ASSERT_EQ(memloupe("report --no-index " + t + " -o " + quote(b)).status, 0);
    EXPECT_EQ(read_file(a), read_file(b)) << "report on " << trace;
    for (const char* format : {"pprof", "folded", "massif"}) {
      const Result x = memloupe("export --format " + std::string(format) + " -o - " + t);
      const Result y = memloupe("export --no-index --format " + std::string(format) + " -o - " + t);
      EXPECT_EQ(x.status, 0) << format << x.err;
      EXPECT_EQ(x.out, y.out) << "export " << format << " on " << trace;
    }
  }

  static Expected<analysis::Model> analyze(const std::string& trace, const analysis::QueryArgs& args,
                                           analysis::UseIndex use = analysis::UseIndex::IfFresh) {
    return analysis::analyze_file(path(trace), args, {}, use);
  }
};

TEST_F(AnalysisIndex, FinalisedTracesCarryOneIndex) {
  for (const char* trace : {"all.trace", "sampled.trace"}) {
    const auto file = read_file(path(trace));
    const auto chunks = index_chunks(file);
    ASSERT_EQ(chunks.size(), 1u) << trace;
    // Last, right after the symbols.
    EXPECT_EQ(chunks[0].offset + format::kChunkHeaderSize + chunks[0].stored.size(), file.size());
  }
}

TEST_F(AnalysisIndex, ViewsAreIdenticalWithAndWithoutTheIndex) {
  expect_same_views("all.trace");
  expect_same_views("sampled.trace");
}

TEST_F(AnalysisIndex, TheModelSaysWhereItCameFrom) {
  analysis::QueryArgs args;
  auto m = analyze("all.trace", args);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->from_index);
  EXPECT_FALSE(m->index_note);
  args.series_buckets = analysis::kIndexSeriesBuckets;  // the report's query
  m = analyze("sampled.trace", args);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->from_index);
  EXPECT_EQ(m->aggregate.series_buckets, analysis::kIndexSeriesBuckets);
  m = analyze("all.trace", args, analysis::UseIndex::Never);
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->from_index);
  args.series_buckets = 0;
  args.grouping = analysis::Grouping::Address;  // grouping only shapes the call tree
  args.hide = {"site_temp"};
  m = analyze("all.trace", args);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->from_index);
}

TEST_F(AnalysisIndex, QueriesTheIndexDoesNotAnswerAreStreamed) {
  std::vector<analysis::QueryArgs> queries(9);
  queries[0].at = {"50%"};
  queries[1].at_peak = true;
  queries[2].at_end = true;
  queries[3].min_size = "4k";
  queries[4].max_lifetime = "1ms";
  queries[5].thread = 1;
  queries[6].focus = {"site_page"};
  queries[7].temporary = "1ms";
  queries[8].series_buckets = analysis::kIndexSeriesBuckets / 2;
  for (size_t i = 0; i < queries.size(); ++i) {
    auto m = analyze("all.trace", queries[i]);
    ASSERT_TRUE(m) << i << ": " << m.error().message;
    EXPECT_FALSE(m->from_index) << "query " << i;
    EXPECT_FALSE(m->index_note) << "query " << i;
  }
  // And through the CLI they still give their (filtered) answers.
  const Result r = memloupe("top --min-size 4k --depth 1 --csv " + quote(path("all.trace")));
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.find("site_temp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("site_page"), std::string::npos) << r.out;
}

TEST_F(AnalysisIndex, DamagedIndexIsIgnoredWithAWarning) {
  const auto file = read_file(path("all.trace"));
  const auto chunk = index_chunks(file).at(0);
  const uint64_t payload_at = chunk.offset + format::kChunkHeaderSize;

  // Flipped bytes: the payload CRC no longer matches.
  auto flipped = file;
  flipped[payload_at + chunk.stored.size() / 2] ^= 0x5a;
  write_file(path("flipped.trace"), flipped);
  expect_same_views("flipped.trace", "warning: " + path("flipped.trace") + ": ignored the analysis index (at offset " +
                                         std::to_string(payload_at) + ": expected a chunk payload with CRC-32C");

  // CRC-valid garbage: a well-formed chunk whose payload is not an index.
  auto garbage = strip_index(file);
  std::vector<uint8_t> junk(300);
  for (size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<uint8_t>(i * 37 + 11);
  junk[0] = analysis::kIndexVersion;
  format::append_chunk(garbage, format::ChunkType::AnalysisIndex, junk);
  write_file(path("garbage.trace"), garbage);
  expect_same_views("garbage.trace", "ignored the analysis index (at offset ");

  // A real index cut short by one byte, re-wrapped with valid CRCs.
  auto cut = strip_index(file);
  auto payload = index_payload(file);
  ASSERT_FALSE(payload.empty());
  payload.pop_back();
  format::append_chunk(cut, format::ChunkType::AnalysisIndex, payload);
  write_file(path("cut.trace"), cut);
  expect_same_views("cut.trace", "ignored the analysis index (at offset ");

  auto m = analyze("garbage.trace", {});
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->from_index);
  ASSERT_TRUE(m->index_note);
}

// Damage in the events, behind intact chunk headers: the index must not answer
// for them. The indexed run says why it ignored the index, then prints what the
// streaming run prints (the events before the damage, and the damage).
TEST_F(AnalysisIndex, DamagedEventsAreNotAnsweredFromTheIndex) {
  auto file = read_file(path("all.trace"));
  std::optional<reader::ChunkView> events;
  for (const reader::ChunkView& c : reader::scan_chunks(file).chunks)
    if (c.type == static_cast<uint8_t>(format::ChunkType::EventsColumns)) events = events ? events : c;
  ASSERT_TRUE(events);
  file[events->offset + format::kChunkHeaderSize + events->stored.size() / 2] ^= 0x5a;
  write_file(path("damaged_events.trace"), file);
  const std::string t = quote(path("damaged_events.trace"));
  for (const std::string view : {"summary", "top", "leaks --csv"}) {
    const Result indexed = memloupe(view + " " + t);
    const Result streamed = memloupe(view + " --no-index " + t);
    EXPECT_EQ(indexed.out, streamed.out) << view;
    EXPECT_EQ(indexed.status, streamed.status) << view;
    EXPECT_NE(indexed.err.find("ignored the analysis index (the chunk at offset " + std::to_string(events->offset) +
                               " does not match its CRC-32C)"),
              std::string::npos)
        << view << "\n" << indexed.err;
    EXPECT_NE(indexed.err.find(streamed.err), std::string::npos) << view << "\n" << indexed.err;
    EXPECT_FALSE(streamed.err.empty()) << "the streaming run reports the damage";
  }
  auto m = analyze("damaged_events.trace", {});
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->from_index);
}

// The sampled trace's index on the --all trace's events: it decodes, but was
// built for other chunks.
void write_stale(const std::string& name) {
  auto stale = strip_index(read_file(path("all.trace")));
  const auto other = index_payload(read_file(path("sampled.trace")));
  format::append_chunk(stale, format::ChunkType::AnalysisIndex, other);
  write_file(path(name), stale);
}

TEST_F(AnalysisIndex, StaleIndexIsIgnoredWithAWarning) {
  write_stale("stale.trace");
  expect_same_views("stale.trace", "it was built for other events");
  auto m = analyze("stale.trace", {});
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->from_index);
}

TEST_F(AnalysisIndex, EveryTruncationOfARealIndexIsRefused) {
  const auto payload = index_payload(read_file(path("sampled.trace")));
  const format::TraceInfo info;  // sampled or not only changes the estimators
  ASSERT_TRUE(analysis::decode_index(reader::Cursor(payload, 0, false), info));
  for (size_t n = 0; n < payload.size(); ++n) {
    auto d = analysis::decode_index(reader::Cursor(std::span(payload).first(n), 0, false), info);
    ASSERT_FALSE(d) << "a " << n << "-byte prefix decoded";
    EXPECT_NE(d.error().message.find("at offset"), std::string::npos);
  }
}

TEST_F(AnalysisIndex, RefinalisingReplacesTheIndex) {
  fs::copy_file(path("all.trace"), path("again.trace"), fs::copy_options::overwrite_existing);
  Result r = memloupe("symbolize --force --index " + quote(path("again.trace")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(index_chunks(read_file(path("again.trace"))).size(), 1u);
  auto m = analyze("again.trace", {});
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->from_index);
  EXPECT_FALSE(m->index_note);
  r = memloupe("symbolize --force --no-index " + quote(path("again.trace")));
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(index_chunks(read_file(path("again.trace"))).size(), 0u);
  m = analyze("again.trace", {});
  ASSERT_TRUE(m);
  EXPECT_FALSE(m->from_index);
}

TEST_F(AnalysisIndex, EventReadersStepOverIt) {
  // The same trace without its index: dump and the memtrace export see the
  // same events; info says whether an index is there.
  write_file(path("bare.trace"), strip_index(read_file(path("all.trace"))));
  for (const std::string& command : {std::string("dump"), std::string("export --format memtrace -o -")}) {
    const Result with = memloupe(command + " " + quote(path("all.trace")));
    const Result without = memloupe(command + " " + quote(path("bare.trace")));
    EXPECT_EQ(with.status, 0) << command << with.err;
    EXPECT_EQ(with.out, without.out) << command;
    EXPECT_FALSE(with.out.empty());
  }
  const Result with = memloupe("info " + quote(path("all.trace")));
  EXPECT_EQ(with.status, 0) << with.err;
  EXPECT_NE(with.out.find("analysis index: yes"), std::string::npos) << with.out;
  const Result without = memloupe("info " + quote(path("bare.trace")));
  EXPECT_NE(without.out.find("analysis index: none"), std::string::npos) << without.out;
  write_stale("stale_info.trace");
  const Result stale = memloupe("info " + quote(path("stale_info.trace")));
  EXPECT_NE(stale.out.find("analysis index: ignored"), std::string::npos) << stale.out;
}

// A trace whose index is larger than one chunk (2^18 distinct stacks) still
// gets one, spread over consecutive index chunks, and the views answer from it
// exactly as from the events. (It had none: "analysis index: none".)
TEST_F(AnalysisIndex, AnIndexLargerThanAChunkIsSplit) {
  const std::string trace = path("many.trace");
  const std::string prog = quote(std::string(MEMLOUPE_BINARY_DIR) + "/bin/many_stacks");
  const Result run = memloupe("run --all --index -o " + quote(trace) + " -- " + prog);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.err.find("memloupe: analysis index: "), std::string::npos) << run.err;
  const std::vector<uint8_t> file = read_file(trace);
  const auto chunks = index_chunks(file);
  ASSERT_GE(chunks.size(), 2u);
  size_t raw = 0;
  for (const reader::ChunkView& c : chunks) raw += c.raw_len;
  EXPECT_GT(raw, format::kMaxChunkRaw);
  const Result info = memloupe("info " + quote(trace));
  EXPECT_NE(info.out.find("analysis index: yes"), std::string::npos) << info.out;
  Expected<analysis::Model> indexed = analyze("many.trace", {});
  ASSERT_TRUE(indexed) << indexed.error().message;
  EXPECT_TRUE(indexed->from_index);
  EXPECT_GE(indexed->aggregate.stacks.size(), 1u << 18);
  for (const char* view : {"summary", "top --by count -n 5 --csv"}) {
    const Result a = memloupe(std::string(view) + " " + quote(trace));
    const Result b = memloupe(std::string(view) + " --no-index " + quote(trace));
    EXPECT_EQ(a.status, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << view;
    EXPECT_EQ(a.err, "") << view;
  }
}

// A trace of fewer than kIndexMinEvents events gets no index unless asked
// for one: the same events, and `info` says why.
TEST_F(AnalysisIndex, ASmallTraceGetsOneOnlyWhenAsked) {
  const std::string prog = quote(std::string(MEMLOUPE_BINARY_DIR) + "/bin/analysis_pattern");
  const std::string small = path("small.trace");
  const Result run = memloupe("run --all -o " + quote(small) + " -- " + prog);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err.find("analysis index"), std::string::npos) << run.err;
  const std::vector<uint8_t> file = read_file(small);
  EXPECT_TRUE(index_chunks(file).empty());
  const Result info = memloupe("info " + quote(small));
  EXPECT_NE(info.out.find("analysis index: none (finalised without one: fewer than " +
                          std::to_string(analysis::kIndexMinEvents) + " events"),
            std::string::npos)
      << info.out;
  auto m = analyze("small.trace", {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_FALSE(m->from_index);
  EXPECT_LT(m->overview.events, analysis::kIndexMinEvents);
  // Asked for, the index answers as the events did.
  const Result streamed = memloupe("summary " + quote(small));
  const Result again = memloupe("symbolize --force --index " + quote(small));
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_NE(again.err.find("memloupe: analysis index: "), std::string::npos) << again.err;
  m = analyze("small.trace", {});
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->from_index);
  EXPECT_EQ(memloupe("summary " + quote(small)).out, streamed.out);
  EXPECT_NE(memloupe("symbolize --force --index --no-index " + quote(small)).status, 0);  // one or the other
}

// A trace without an index says why in `info`.
TEST_F(AnalysisIndex, InfoSaysWhyThereIsNone) {
  const std::string raw = path("noindex.trace");
  const std::string prog = quote(std::string(MEMLOUPE_BINARY_DIR) + "/bin/analysis_pattern");
  ASSERT_EQ(memloupe("run --no-symbolize -o " + quote(raw) + " -- " + prog).status, 0);
  Result info = memloupe("info " + quote(raw));
  EXPECT_NE(info.out.find("analysis index: none (not finalised"), std::string::npos) << info.out;
  ASSERT_EQ(memloupe("symbolize --no-index " + quote(raw)).status, 0);
  info = memloupe("info " + quote(raw));
  EXPECT_NE(info.out.find("analysis index: none (finalised without one"), std::string::npos) << info.out;
}

}  // namespace

namespace {

// Format version 2's coarser time unit for --all (32 µs by default) changes the
// times and nothing else: the same sites, counts, peak and leaks as the same
// program recorded in µs; every time is a whole tick.
TEST_F(AnalysisIndex, TheTimeUnitChangesOnlyTimes) {
  auto coarse = analyze("all.trace", {});
  auto fine = analyze("all_us.trace", {});
  ASSERT_TRUE(coarse && fine);
  EXPECT_EQ(coarse->overview.info.version, format::kFormatVersion);
  EXPECT_EQ(coarse->overview.info.time_unit_us, 32u);
  EXPECT_EQ(fine->overview.info.time_unit_us, 1u);
  const analysis::Overview& a = coarse->overview;
  const analysis::Overview& b = fine->overview;
  EXPECT_EQ(a.alloc_events, b.alloc_events);
  EXPECT_EQ(a.free_events, b.free_events);
  for (auto [x, y] : {std::pair{a.allocated, b.allocated}, {a.leaked, b.leaked}, {a.peak.live, b.peak.live}}) {
    EXPECT_EQ(x.blocks, y.blocks);
    EXPECT_EQ(x.bytes, y.bytes);
  }
  EXPECT_EQ(a.duration_ns % 32000, 0u);
  EXPECT_EQ(a.peak.time_ns % 32000, 0u);
  EXPECT_EQ(coarse->aggregate.stacks.size(), fine->aggregate.stacks.size());
  for (const char* view : {"top --csv -n 0", "top --by peak --csv -n 0", "leaks --csv"}) {
    const Result x = memloupe(std::string(view) + " " + quote(path("all.trace")));
    const Result y = memloupe(std::string(view) + " " + quote(path("all_us.trace")));
    EXPECT_EQ(x.status, 0) << view << x.err;
    EXPECT_EQ(x.out, y.out) << view;
  }
  const Result info = memloupe("info " + quote(path("all.trace")));
  EXPECT_NE(info.out.find("32 µs"), std::string::npos) << info.out;
  const Result life = memloupe("lifetimes " + quote(path("all.trace")));
  EXPECT_NE(life.out.find("whole ticks of 32.0 µs"), std::string::npos) << life.out;
}

// A stored trace with an older index: it reads as the events do, from the
// index (no "index ignored" warning), in every view the index answers.
// The copy of tests/data/`dir_name`/`name` in the fixture's folder: named by
// both, as the folders hold files of the same names and ctest runs each test
// as a process of its own, side by side (one name for both raced).
std::string stored_copy(const std::string& dir_name, const std::string& name) { return dir_name + "_" + name; }

void expect_stored_index_answers(const std::string& dir_name, const std::string& name, uint8_t index_version) {
  const auto bytes = read_file(std::string(MEMLOUPE_SOURCE_DIR) + "/tests/data/" + dir_name + "/" + name);
  ASSERT_GT(bytes.size(), format::kPrologueSize) << name;
  const auto index = index_payload(bytes);
  ASSERT_FALSE(index.empty()) << name;
  EXPECT_EQ(index[0], index_version) << name;
  const std::string copy = path(stored_copy(dir_name, name));
  write_file(copy, bytes);
  auto m = analysis::analyze_file(copy, {}, {}, analysis::UseIndex::IfFresh);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_TRUE(m->from_index) << name;
  for (const char* view : {"summary", "top --csv -n 0", "leaks --csv", "lifetimes --csv", "timeline --csv"}) {
    const Result indexed = memloupe(std::string(view) + " " + quote(copy));
    const Result streamed = memloupe(std::string(view) + " --no-index " + quote(copy));
    EXPECT_EQ(indexed.status, 0) << view << indexed.err;
    EXPECT_EQ(indexed.err, "") << view;  // no "index ignored" warning
    EXPECT_EQ(indexed.out, streamed.out) << view << " on " << name;
  }
}

// Traces written before format version 2, with their version-2 indexes (the
// fuzz seeds of that round, kept in tests/data/format_v1): they read as
// before, times in µs, and their indexes still answer.
TEST_F(AnalysisIndex, VersionOneTracesAndVersionTwoIndexesAreRead) {
  for (const std::string name : {"all_indexed.mlt", "sampled_indexed.mlt"}) {
    expect_stored_index_answers("format_v1", name, 2);
    const auto bytes = read_file(path(stored_copy("format_v1", name)));
    EXPECT_EQ(format::get_u32(bytes.data() + 8), 1u);
    auto m = analyze(stored_copy("format_v1", name), {});
    ASSERT_TRUE(m) << m.error().message;
    EXPECT_EQ(m->overview.info.time_unit_us, 1u);
  }
}

// Version 3's indexes (a frame pool, stacks as its ranges, timelines as plain
// differences), as the fuzz seeds of the last round that wrote them
// (tests/data/index_v3): still answered from.
TEST_F(AnalysisIndex, VersionThreeIndexesAreRead) {
  for (const std::string name : {"all_indexed.mlt", "sampled_indexed.mlt"}) expect_stored_index_answers("index_v3", name, 3);
}

// Version 4's index is what the finaliser writes now.
TEST_F(AnalysisIndex, NewIndexesAreVersion4) {
  for (const char* trace : {"all.trace", "sampled.trace"}) {
    const auto index = index_payload(read_file(path(trace)));
    ASSERT_FALSE(index.empty()) << trace;
    EXPECT_EQ(index[0], 4);
    EXPECT_EQ(index[0], analysis::kIndexVersion) << trace;
  }
}

}  // namespace
