// The recorder's events chunks in their final form (zstd on the flush thread,
// docs/RECORDER.md "What the trace costs to write"), end to end on a real
// `--all` recording of programs/analysis_pattern.c: the finaliser keeps them as
// stored; the analysis equals that of the same events compacted the old way;
// a compressed chunk cut short, as a SIGKILL during its write leaves it, is
// reported and dropped, and everything before it is kept.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

#include "cli_runner.h"
#include "format/chunk.h"
#include "format/wire.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"

namespace memloupe::analysis_testing {
namespace {

const std::filesystem::path kScratch = std::filesystem::path(MEMLOUPE_BINARY_DIR) / "tests/analysis/stored_scratch";
std::string path(const std::string& name) { return (kScratch / name).string(); }
Result memloupe(const std::string& args) { return run_memloupe(kScratch, args); }

bool is_events(const reader::ChunkView& c) {
  return c.type == static_cast<uint8_t>(format::ChunkType::Events) ||
         c.type == static_cast<uint8_t>(format::ChunkType::EventsColumns);
}

std::vector<reader::ChunkView> events_chunks(const std::vector<uint8_t>& file) {
  std::vector<reader::ChunkView> out;
  for (const reader::ChunkView& c : reader::scan_chunks(file).chunks)
    if (is_events(c)) out.push_back(c);
  return out;
}

// The same trace with every chunk stored uncompressed: what the recorder wrote
// before it compressed (and writes with MEMLOUPE_ZSTD_LEVEL=0).
std::vector<uint8_t> inflated(const std::vector<uint8_t>& file) {
  std::vector<uint8_t> out(file.begin(), file.begin() + format::kPrologueSize);
  std::vector<uint8_t> buffer;
  reader::ChunkInflater inflater;  // the recorder's events chunks are pieces of one zstd stream
  for (const reader::ChunkView& c : reader::scan_chunks(file).chunks) {
    auto payload = inflater.payload(c, buffer);
    EXPECT_TRUE(payload) << payload.error().message;
    if (payload) format::append_chunk(out, static_cast<format::ChunkType>(c.type), *payload);
  }
  return out;
}

// Events (not symbol definitions) a Reader delivers from `file`, and its error.
struct Read {
  uint64_t events = 0;
  std::string error;
};
Read read_events(const std::string& file) {
  auto r = reader::Reader::open(file);
  EXPECT_TRUE(r) << (r ? "" : r.error().message);
  Read out;
  if (!r) return out;
  while (const format::Event* e = (*r)->next()) out.events += !std::holds_alternative<format::SymbolDef>(*e);
  if ((*r)->error()) out.error = (*r)->error()->message;
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

class StoredEvents : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
    record_once(kScratch, {"raw.trace"}, [] {
      // Flushed every millisecond: several events chunks from a short program.
      // How many depends on the scheduler: on a loaded machine the flush
      // thread may not run until the exit, and the one chunk it then writes
      // cannot show chunks kept or merged. Such a recording is made again
      // (and never left behind for the next run to reuse).
      const std::string bin = std::string(MEMLOUPE_BINARY_DIR) + "/bin/";
      const std::string command = "LD_PRELOAD=" + quote(bin + "libmemloupe_preload.so") +
                                  " MEMLOUPE_MODE=all MEMLOUPE_FLUSH_MS=1 MEMLOUPE_OUTPUT=" +
                                  quote(path("raw.trace")) + " " + quote(bin + "analysis_pattern");
      size_t chunks = 0;
      for (int attempt = 0; attempt < 20 && chunks < 2; ++attempt) {
        ASSERT_EQ(std::system(command.c_str()), 0) << command;
        chunks = events_chunks(read_file(path("raw.trace"))).size();
      }
      if (chunks < 2) std::filesystem::remove(path("raw.trace"));
      ASSERT_GE(chunks, 2u) << "20 recordings of one events chunk each: " << command;
    });
  }
  void SetUp() override {
#ifdef MEMLOUPE_SANITIZED
    GTEST_SKIP() << "the recorder cannot be preloaded from a sanitizer build";
#endif
  }
};

TEST_F(StoredEvents, TheRecordersEventsChunksAreCompressedAndKeptAsStored) {
  const std::vector<uint8_t> raw = read_file(path("raw.trace"));
  const std::vector<reader::ChunkView> recorded = events_chunks(raw);
  ASSERT_GE(recorded.size(), 2u);
  for (const reader::ChunkView& c : recorded) {
    EXPECT_EQ(c.type, static_cast<uint8_t>(format::ChunkType::EventsColumns)) << "chunk at " << c.offset;
    EXPECT_TRUE(c.flags & format::kChunkZstd) << "chunk at " << c.offset;
  }
  const Result r = memloupe("symbolize " + quote(path("raw.trace")) + " -o " + quote(path("stored.trace")));
  ASSERT_EQ(r.status, 0) << r.err;
  const std::vector<uint8_t> stored = read_file(path("stored.trace"));
  const std::vector<reader::ChunkView> kept = events_chunks(stored);
  ASSERT_EQ(kept.size(), recorded.size());
  for (size_t i = 0; i < kept.size(); ++i) {
    EXPECT_TRUE(std::ranges::equal(kept[i].stored, recorded[i].stored)) << "events chunk " << i;
    EXPECT_EQ(kept[i].raw_len, recorded[i].raw_len);
  }
  const Read whole = read_events(path("stored.trace"));
  EXPECT_EQ(whole.error, "");
  EXPECT_EQ(whole.events, read_events(path("raw.trace")).events);
}

// One raw trace, finalised as stored and (its chunks inflated) compacted as
// before: every view prints the same.
TEST_F(StoredEvents, TheAnalysisEqualsThatOfTheCompactedEvents) {
  write_file(path("old_form.trace"), inflated(read_file(path("raw.trace"))));
  for (const char* name : {"raw.trace", "old_form.trace"}) {
    const std::string out = std::string(name) + ".fin";
    const Result r = memloupe("symbolize " + quote(path(name)) + " -o " + quote(path(out)));
    ASSERT_EQ(r.status, 0) << name << "\n" << r.err;
  }
  // The compacted events merge the recorder's chunks: fewer of them.
  EXPECT_LT(events_chunks(read_file(path("old_form.trace.fin"))).size(),
            events_chunks(read_file(path("raw.trace.fin"))).size());
  for (const std::string view : {"summary --json", "summary", "leaks --csv", "top --csv", "lifetimes",
                                 "timeline --csv", "top --by peak --depth 1 --csv"}) {
    for (const char* index : {"", " --no-index"}) {
      const Result stored = memloupe(view + index + " " + quote(path("raw.trace.fin")));
      const Result compacted = memloupe(view + index + " " + quote(path("old_form.trace.fin")));
      ASSERT_EQ(stored.status, 0) << view << "\n" << stored.err;
      EXPECT_EQ(compacted.status, stored.status) << view;
      EXPECT_EQ(replace_all(compacted.out, "old_form.trace.fin", "raw.trace.fin"), stored.out) << view << index;
    }
  }
}

// A SIGKILL while the flush thread writes a compressed chunk leaves it cut
// short: the reader delivers every event before it and says where the trace
// ends; the finaliser keeps those events, says so, and writes a whole file.
TEST_F(StoredEvents, ACompressedChunkCutShortIsReportedAndDropped) {
  std::vector<uint8_t> raw = read_file(path("raw.trace"));
  const std::vector<reader::ChunkView> chunks = events_chunks(raw);
  ASSERT_GE(chunks.size(), 2u);
  const reader::ChunkView& last = chunks.back();
  raw.resize(last.offset + format::kChunkHeaderSize + last.stored.size() / 2);
  write_file(path("cut.trace"), raw);

  const Read cut = read_events(path("cut.trace"));
  EXPECT_NE(cut.error.find("trace ends early at offset " + std::to_string(last.offset)), std::string::npos)
      << cut.error;
  EXPECT_GT(cut.events, 0u);
  EXPECT_LT(cut.events, read_events(path("raw.trace")).events);

  const Result r = memloupe("symbolize " + quote(path("cut.trace")) + " -o " + quote(path("cut.fin")));
  EXPECT_NE(r.err.find("trace ends early at offset " + std::to_string(last.offset)), std::string::npos) << r.err;
  ASSERT_TRUE(std::filesystem::exists(path("cut.fin"))) << r.err;
  const Read kept = read_events(path("cut.fin"));
  EXPECT_EQ(kept.error, "");
  EXPECT_EQ(kept.events, cut.events);
  // The chunks before the cut, as stored.
  const std::vector<reader::ChunkView> before = events_chunks(read_file(path("cut.fin")));
  ASSERT_EQ(before.size(), chunks.size() - 1);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_TRUE(std::ranges::equal(before[i].stored, chunks[i].stored));
}

}  // namespace
}  // namespace memloupe::analysis_testing
