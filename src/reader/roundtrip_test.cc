// Encode -> decode round trips of seeded random streams: the reader must give
// back exactly the events the generator asked the encoder to write.
#include <gtest/gtest.h>

#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "finalize/compact.h"
#include "format/chunk.h"
#include "format/encoder.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"
#include "support/test_streams.h"

namespace memloupe::reader {
namespace {

using format::Mode;
using testing::make_stream;
using testing::read_all;
using testing::StreamOptions;

void expect_round_trip(uint64_t seed, const StreamOptions& o) {
  testing::Stream s = make_stream(seed, o);
  std::string error;
  std::vector<std::string> got = read_all(s.bytes, &error);
  EXPECT_EQ(error, "");
  ASSERT_EQ(got.size(), s.expected.size()) << "seed " << seed;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], s.expected[i]) << "event " << i;
}

TEST(RoundTrip, SampledRealisticStacks) {
  for (uint64_t seed = 1; seed <= 10; ++seed) expect_round_trip(seed, {.mode = Mode::Sampled});
}

TEST(RoundTrip, AllModeWithAddresses) {
  for (uint64_t seed = 1; seed <= 10; ++seed) expect_round_trip(seed, {.mode = Mode::All});
}

// The recorder's default --all form: no per-event addresses (the reader delivers
// 0), frees still name their blocks; also through the column form.
TEST(RoundTrip, AllModeWithoutAddresses) {
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const StreamOptions o{.mode = Mode::All, .addresses = false, .flush_often = seed % 2 == 0};
    expect_round_trip(seed, o);
    testing::Stream s = make_stream(seed, o);
    auto compacted = finalize::compact_trace(s.bytes, {.zstd_level = 1, .max_events_payload = 50000});
    ASSERT_TRUE(compacted.ok()) << compacted.error().message;
    std::string error;
    EXPECT_EQ(read_all(compacted->bytes, &error), s.expected) << "seed " << seed;
    EXPECT_EQ(error, "");
  }
}

// Without addresses the same events take fewer bytes: no address fields.
TEST(RoundTrip, AddressFreeFormIsSmaller) {
  const testing::Stream with = make_stream(3, {.mode = Mode::All, .events = 4000});
  const testing::Stream without = make_stream(3, {.mode = Mode::All, .addresses = false, .events = 4000});
  ASSERT_EQ(with.expected.size(), without.expected.size());
  EXPECT_LT(without.bytes.size() + 4000, with.bytes.size());
}

// The encoder's column form (what the recorder writes) is what the finaliser's
// compaction makes of the row form: the same bytes, chunk for chunk, when the
// events fit one chunk; and the same events read back, when they span many.
TEST(RoundTrip, DirectColumnsEqualCompactedRows) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    for (const bool addresses : {true, false}) {
      StreamOptions o{.mode = seed % 3 ? Mode::All : Mode::Sampled, .addresses = addresses, .events = 1000,
                      .rare_events = false};
      const testing::Stream rows = make_stream(seed, o);
      o.columns = true;
      const testing::Stream columns = make_stream(seed, o);
      ASSERT_EQ(columns.chunk_ends.size(), 1u) << "seed " << seed;  // one events chunk
      auto compacted = finalize::compact_trace(rows.bytes, {.zstd_level = 0});
      ASSERT_TRUE(compacted.ok()) << compacted.error().message;
      EXPECT_EQ(compacted->bytes, columns.bytes) << "seed " << seed << " addresses " << addresses;
    }
  }
}

// The lane count of the first column-form events chunk (docs/FORMAT.md §5.8:
// after the 16-byte prefix and the stream count).
unsigned first_lane_count(const std::vector<uint8_t>& bytes) {
  for (const ChunkView& c : scan_chunks(bytes).chunks)
    if (c.type == static_cast<uint8_t>(format::ChunkType::EventsColumns) && !(c.flags & format::kChunkZstd))
      return c.stored[17];
  return 0;
}

// More threads than lanes: the later ones share the last lane, whose
// ThreadSwitches then alternate (format/lanes.h); the finaliser's regrouping
// places them as the encoder does.
TEST(RoundTrip, ThreadsShareTheLastLane) {
  for (uint64_t seed = 20; seed < 24; ++seed) {
    StreamOptions o{.mode = Mode::All, .addresses = seed % 2 == 0, .events = 1500, .rare_events = false,
                    .many_threads = true};
    const testing::Stream rows = make_stream(seed, o);
    o.columns = true;
    const testing::Stream columns = make_stream(seed, o);
    ASSERT_EQ(columns.chunk_ends.size(), 1u);
    EXPECT_EQ(first_lane_count(columns.bytes), format::kMaxLanes);  // every lane in use
    expect_round_trip(seed, o);
    auto compacted = finalize::compact_trace(rows.bytes, {.zstd_level = 0});
    ASSERT_TRUE(compacted.ok()) << compacted.error().message;
    EXPECT_EQ(compacted->bytes, columns.bytes) << "seed " << seed;
    // Many chunks, through the finaliser's cuts: the lanes start anew in each.
    o.events = 20000;
    o.flush_often = true;
    expect_round_trip(seed, o);
    const testing::Stream many = make_stream(seed, o);
    auto recut = finalize::compact_trace(many.bytes, {.zstd_level = 1, .max_events_payload = 30000});
    ASSERT_TRUE(recut.ok()) << recut.error().message;
    std::string error;
    EXPECT_EQ(read_all(recut->bytes, &error), many.expected) << "seed " << seed;
    EXPECT_EQ(error, "");
  }
}

TEST(RoundTrip, DirectColumnsManyChunks) {
  for (uint64_t seed = 400; seed < 406; ++seed) {
    for (const bool addresses : {true, false}) {
      expect_round_trip(seed, {.mode = Mode::All, .addresses = addresses, .events = 30000, .columns = true});
      expect_round_trip(seed, {.mode = Mode::All, .addresses = addresses, .events = 4000,
                               .flush_often = true, .columns = true});
    }
    expect_round_trip(seed, {.mode = Mode::Sampled, .max_depth = 250, .columns = true});
    const testing::Stream s = make_stream(seed, {.mode = Mode::All, .addresses = false, .events = 250000,
                                                 .rare_events = false, .columns = true});
    EXPECT_GT(s.chunk_ends.size(), 1u);  // the streams' buffers fill: chunks are cut between events
  }
}

TEST(RoundTrip, DeepRecursiveStacks) {
  for (uint64_t seed = 100; seed < 110; ++seed)
    expect_round_trip(seed, {.mode = Mode::Sampled, .events = 1500, .max_depth = 300});
}

TEST(RoundTrip, RapidlyChangingBacktraces) {
  for (uint64_t seed = 200; seed < 210; ++seed)
    expect_round_trip(seed, {.mode = Mode::All, .max_depth = 220, .chaotic = true});
}

TEST(RoundTrip, ManySmallChunks) {
  for (uint64_t seed = 300; seed < 310; ++seed)
    expect_round_trip(seed, {.mode = Mode::All, .events = 4000, .flush_often = true});
}

TEST(RoundTrip, LongStreamSpansManyChunks) {
  StreamOptions o{.mode = Mode::Sampled, .events = 30000, .max_depth = 200, .rare_events = false};
  testing::Stream s = make_stream(7, o);
  EXPECT_GT(s.chunk_ends.size(), 3u);
  std::string error;
  EXPECT_EQ(read_all(s.bytes, &error), s.expected);
  EXPECT_EQ(error, "");
}

// Reader::fresh_frames: every frame past the fresh ones was in an earlier
// Alloc's backtrace, and (the point of it) many frames are past them.
void expect_fresh_frames_cover_new_addresses(const std::vector<uint8_t>& bytes) {
  auto r = Reader::from_bytes(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::unordered_set<uint64_t> seen;
  uint64_t frames = 0, fresh = 0, allocs = 0;
  while (const format::Event* e = (*r)->next()) {
    const auto* a = std::get_if<format::Alloc>(e);
    if (a == nullptr) continue;
    const uint32_t n = (*r)->fresh_frames();
    ASSERT_LE(n, a->backtrace.size()) << "alloc " << allocs;
    for (size_t j = n; j < a->backtrace.size(); ++j)
      ASSERT_TRUE(seen.count(a->backtrace[j])) << "alloc " << allocs << " frame " << j;
    seen.insert(a->backtrace.begin(), a->backtrace.end());
    frames += a->backtrace.size();
    fresh += n;
    ++allocs;
  }
  EXPECT_FALSE((*r)->error());
  EXPECT_GT(allocs, 100u);
  EXPECT_LT(fresh * 4, frames * 3) << fresh << " of " << frames << " frames fresh";
}

TEST(RoundTrip, FreshFramesCoverEveryNewAddress) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (const StreamOptions& o : {StreamOptions{.mode = Mode::Sampled}, StreamOptions{.mode = Mode::All},
                                   StreamOptions{.mode = Mode::All, .events = 3000, .max_depth = 250},
                                   StreamOptions{.mode = Mode::All, .events = 4000, .flush_often = true}}) {
      testing::Stream s = make_stream(seed, o);
      expect_fresh_frames_cover_new_addresses(s.bytes);
      auto compacted = finalize::compact_trace(s.bytes, {.zstd_level = 1, .max_events_payload = 50000});
      ASSERT_TRUE(compacted.ok());
      expect_fresh_frames_cover_new_addresses(compacted->bytes);
    }
  }
}

// Reader::backtrace_key: Allocs with the same key have the same backtrace, and
// (the point of it) many Allocs repeat a key: the interning then skips them.
void expect_keys_name_backtraces(const std::vector<uint8_t>& bytes) {
  auto r = Reader::from_bytes(bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::unordered_map<uint64_t, std::pair<uint32_t, std::vector<uint64_t>>> by_serial;
  uint64_t allocs = 0, repeats = 0;
  while (const format::Event* e = (*r)->next()) {
    const auto* a = std::get_if<format::Alloc>(e);
    if (a == nullptr) continue;
    ++allocs;
    const BacktraceKey key = (*r)->backtrace_key();
    ASSERT_NE(key.serial, 0u) << "alloc " << allocs;
    ASSERT_LT(key.slot, format::kBtCacheSize);
    const std::vector<uint64_t> frames(a->backtrace.begin(), a->backtrace.end());
    auto [it, is_new] = by_serial.try_emplace(key.serial, key.slot, frames);
    if (is_new) continue;
    ++repeats;
    ASSERT_EQ(it->second.first, key.slot) << "alloc " << allocs;
    ASSERT_EQ(it->second.second, frames) << "alloc " << allocs << " repeats serial " << key.serial;
  }
  EXPECT_FALSE((*r)->error());
  EXPECT_GT(repeats * 3, allocs) << repeats << " of " << allocs << " Allocs repeat a key";
}

TEST(RoundTrip, BacktraceKeysNameOneBacktrace) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    for (const StreamOptions& o : {StreamOptions{.mode = Mode::Sampled}, StreamOptions{.mode = Mode::All},
                                   StreamOptions{.mode = Mode::All, .events = 3000, .max_depth = 250},
                                   StreamOptions{.mode = Mode::All, .events = 4000, .flush_often = true, .columns = true}}) {
      testing::Stream s = make_stream(seed, o);
      expect_keys_name_backtraces(s.bytes);
      auto compacted = finalize::compact_trace(s.bytes, {.zstd_level = 1, .max_events_payload = 50000});
      ASSERT_TRUE(compacted.ok());
      expect_keys_name_backtraces(compacted->bytes);
    }
  }
}

TEST(RoundTrip, HeaderFields) {
  testing::Stream s = make_stream(1, {.mode = Mode::All, .events = 10});
  auto r = Reader::from_bytes(s.bytes);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const format::TraceInfo& info = (*r)->info();
  EXPECT_EQ(info.version, format::kFormatVersion);
  EXPECT_EQ(info.time_unit_us, 1u);
  EXPECT_EQ(info.pointer_size, sizeof(void*));
  EXPECT_EQ(info.mode, Mode::All);
  EXPECT_TRUE(info.addresses);
  EXPECT_EQ(info.bytes_per_sample, 0u);
  EXPECT_EQ(info.pid, 4242u);
  EXPECT_EQ(info.start_wall_ns, 1700000000123456789ull);
  EXPECT_EQ(info.start_mono_ns, 987654321u);
  EXPECT_EQ(info.host, "testhost");
  EXPECT_EQ(info.executable, "/usr/bin/example");
  EXPECT_EQ(info.argv, (std::vector<std::string>{"example", "--flag", "", "last"}));
  EXPECT_EQ(info.source_format, "");
  EXPECT_FALSE((*r)->has_symbols_section());
  testing::Stream plain = make_stream(1, {.mode = Mode::All, .addresses = false, .events = 10});
  auto p = Reader::from_bytes(plain.bytes);
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ((*p)->info().mode, Mode::All);
  EXPECT_FALSE((*p)->info().addresses);
}

// Format version 2's time unit: every time the reader gives is the start of
// its tick (floor(t / unit) x unit), in rows and in columns, whatever the unit.
TEST(RoundTrip, CoarserTimeUnits) {
  for (uint32_t unit : {1u, 4u, 16u, 64u, 1u << 20}) {
    for (bool columns : {false, true}) {
      testing::StreamOptions o{.mode = Mode::All, .addresses = false, .columns = columns, .time_unit_us = unit};
      expect_round_trip(static_cast<uint64_t>(unit) * 2 + columns, o);
      const testing::Stream s = make_stream(5, o);
      auto r = Reader::from_bytes(s.bytes);
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_EQ((*r)->info().time_unit_us, unit);
    }
  }
}

// A coarser unit makes the same events smaller: most deltas become 0.
TEST(RoundTrip, CoarserTimeUnitsAreSmaller) {
  const testing::Stream fine = make_stream(9, {.mode = Mode::All, .addresses = false, .events = 4000});
  const testing::Stream coarse =
      make_stream(9, {.mode = Mode::All, .addresses = false, .events = 4000, .time_unit_us = 1024});
  EXPECT_LT(coarse.bytes.size(), fine.bytes.size());
}

// The header's last field is the time unit in version 2 and absent in version 1
// (whose times are µs); a unit of 0 or past the limit is refused where it is.
TEST(RoundTrip, TimeUnitByVersion) {
  auto header_with = [](uint32_t version, bool drop_unit, std::optional<uint8_t> unit_byte) {
    std::vector<uint8_t> bytes(format::kMaxFileHeader);
    bytes.resize(format::encode_file_header(testing::test_header(Mode::All, false, 16), bytes));
    std::vector<uint8_t> payload(bytes.begin() + format::kPrologueSize + format::kChunkHeaderSize, bytes.end());
    EXPECT_EQ(payload.back(), 16);  // the unit, a one-byte varint
    if (drop_unit) payload.pop_back();
    if (unit_byte) payload.back() = *unit_byte;
    bytes.resize(format::kPrologueSize + format::kChunkHeaderSize);
    bytes.insert(bytes.end(), payload.begin(), payload.end());
    format::write_chunk_header(bytes.data() + format::kPrologueSize, format::ChunkType::Header, 0, payload,
                               static_cast<uint32_t>(payload.size()));
    format::write_prologue(bytes.data(), version);
    return bytes;
  };
  auto v2 = Reader::from_bytes(header_with(2, false, std::nullopt));
  ASSERT_TRUE(v2.ok()) << v2.error().message;
  EXPECT_EQ((*v2)->info().time_unit_us, 16u);
  auto v1 = Reader::from_bytes(header_with(1, true, std::nullopt));
  ASSERT_TRUE(v1.ok()) << v1.error().message;
  EXPECT_EQ((*v1)->info().version, 1);
  EXPECT_EQ((*v1)->info().time_unit_us, 1u);
  // Version 1 with the field: one byte too many for its header.
  auto v1_extra = Reader::from_bytes(header_with(1, false, std::nullopt));
  ASSERT_FALSE(v1_extra.ok());
  EXPECT_NE(v1_extra.error().message.find("the end of the header chunk"), std::string::npos)
      << v1_extra.error().message;
  // Version 2 without it, or with 0.
  for (auto bytes : {header_with(2, true, std::nullopt), header_with(2, false, 0)}) {
    auto r = Reader::from_bytes(bytes);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find("expected a time unit (varint, 1 to 1048576"), std::string::npos)
        << r.error().message;
    EXPECT_NE(r.error().message.find("at offset "), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace memloupe::reader
