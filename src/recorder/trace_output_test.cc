#include "recorder/trace_output.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_c_useRowMatchFinder, as the compressor sets it
#include <zstd.h>

#include "format/encoder.h"
#include "reader/chunk_io.h"

namespace memloupe::recorder {
namespace {

namespace fs = std::filesystem;

int g_failures = 0;
void count_failure() noexcept { ++g_failures; }

class TraceOutputTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("memloupe_output_test." + std::to_string(::getpid()));
    fs::create_directories(dir_);
    g_failures = 0;
  }
  void TearDown() override { fs::remove_all(dir_); }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  fs::path dir_;
};

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

TEST_F(TraceOutputTest, QueuesUntilDrainedThenWritesInOrder) {
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "t.trace";
  ASSERT_TRUE(out->open(p.c_str(), false, count_failure));
  out->write_chunk(bytes("first,"));
  out->write_chunk(bytes("second"));
  EXPECT_EQ(slurp(p), "");  // nothing written from the producer side
  out->drain();
  EXPECT_EQ(slurp(p), "first,second");
  out->close();
  EXPECT_EQ(g_failures, 0);
}

TEST_F(TraceOutputTest, AFullQueueIsWrittenByTheProducer) {
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "big.trace";
  ASSERT_TRUE(out->open(p.c_str(), false, count_failure));
  const std::string chunk(1 << 20, 'x');
  for (int i = 0; i < 6; ++i) out->write_chunk(bytes(chunk));  // 6 MiB > the 4 MiB ring
  EXPECT_GE(fs::file_size(p), 3u << 20);
  out->close();
  EXPECT_EQ(fs::file_size(p), 6u << 20);
}

TEST_F(TraceOutputTest, NeverOverwriteNumbersTheFile) {
  const fs::path p = dir_ / "n.trace";
  std::ofstream(p) << "keep";
  auto out = std::make_unique<TraceOutput>();
  ASSERT_TRUE(out->open(p.c_str(), true, count_failure));
  EXPECT_EQ(std::string(out->path()), p.string() + ".1");
  out->close();
  EXPECT_EQ(slurp(p), "keep");
}

TEST_F(TraceOutputTest, MissingDirectoryIsReportedOnce) {
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "no" / "such" / "dir.trace";
  testing::internal::CaptureStderr();
  EXPECT_FALSE(out->open(p.c_str(), false, count_failure));
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "memloupe: cannot write trace '" + p.string() +
                     "': No such file or directory; recording disabled\n");
  EXPECT_EQ(g_failures, 1);
}

TEST_F(TraceOutputTest, DiskFullIsReportedOnceAndDataDropped) {
  auto out = std::make_unique<TraceOutput>();
  ASSERT_TRUE(out->open("/dev/full", false, count_failure));
  testing::internal::CaptureStderr();
  out->write_chunk(bytes("a"));
  out->drain();
  out->write_chunk(bytes("b"));
  out->drain();
  out->close();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "memloupe: cannot write trace '/dev/full': No space left on device; recording disabled\n");
  EXPECT_EQ(g_failures, 1);
  EXPECT_TRUE(out->failed());
}

// Collects an encoder's chunks.
struct Chunks final : format::ChunkSink {
  void write_chunk(std::span<const uint8_t> c) noexcept override { all.emplace_back(c.begin(), c.end()); }
  std::vector<std::vector<uint8_t>> all;
};

// A column chunk of one event, as the encoder seals it.
std::vector<uint8_t> one_event_chunk() {
  auto encoder = std::make_unique<format::Encoder>();
  Chunks chunks;
  encoder->start(chunks, format::Mode::All, {.addresses = false, .columns = true});
  encoder->thread_start(format::ThreadId{1}, 10, 1234);
  encoder->flush();
  EXPECT_EQ(chunks.all.size(), 1u);
  return chunks.all.empty() ? std::vector<uint8_t>() : chunks.all[0];
}

// Events chunks go to the file compressed, as chunks of the same type whose
// payload inflates to the encoder's; other records (the prologue) as they are.
TEST_F(TraceOutputTest, EventsChunksAreWrittenCompressed) {
  auto encoder = std::make_unique<format::Encoder>();
  Chunks chunks;
  encoder->start(chunks, format::Mode::All, {.addresses = false, .columns = true});
  const uint64_t frames[] = {0x401000, 0x402000, 0x403000};
  for (uint64_t i = 0; i < 20000; ++i) {
    const format::AllocId id =
        encoder->alloc({.thread = format::ThreadId{1}, .time_ns = i * 1000, .size = 16 + i % 7, .backtrace = frames});
    encoder->free(id, format::ThreadId{1}, i * 1000 + 500, format::Func::Free);
  }
  encoder->flush();
  ASSERT_EQ(chunks.all.size(), 1u);
  const std::vector<uint8_t>& chunk = chunks.all[0];

  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "z.trace";
  ASSERT_TRUE(out->open(p.c_str(), false, count_failure, 6, /*stream_events=*/true));
  uint8_t prologue[format::kPrologueSize];
  format::write_prologue(prologue);
  out->write_chunk(prologue);
  out->write_chunk(chunk);
  out->write_chunk(chunk);
  out->close();
  const std::string file = slurp(p);
  const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(file.data()), file.size());
  const reader::ChunkList list = reader::scan_chunks(bytes);
  ASSERT_FALSE(list.error) << list.error->message;
  ASSERT_EQ(list.chunks.size(), 2u);
  // Pieces of one zstd stream (docs/FORMAT.md §3): the first starts it, the
  // second is matched against the first (the same events: a sliver of it).
  const reader::ChunkView& c = list.chunks[0];
  EXPECT_EQ(c.type, static_cast<uint8_t>(format::ChunkType::EventsColumns));
  EXPECT_EQ(c.flags, format::kChunkZstd | format::kChunkZstdStream | format::kChunkStreamStart);
  EXPECT_EQ(list.chunks[1].flags, format::kChunkZstd | format::kChunkZstdStream);
  EXPECT_LT(c.stored.size() * 10, chunk.size());  // 20000 alike pairs compress well
  EXPECT_LT(list.chunks[1].stored.size() * 3, c.stored.size());
  reader::ChunkInflater inflater;
  std::vector<uint8_t> buffer;
  for (const reader::ChunkView& piece : list.chunks) {
    auto payload = inflater.payload(piece, buffer);
    ASSERT_TRUE(payload) << payload.error().message;
    EXPECT_TRUE(std::ranges::equal(*payload, std::span(chunk).subspan(format::kChunkHeaderSize)));
  }
  EXPECT_EQ(g_failures, 0);
}

// A new file starts a new stream, as does a change of level (each a new
// zstd frame, readable without the pieces before it); a sampled trace's
// events chunks are one frame each.
TEST_F(TraceOutputTest, EachFileAndEachLevelStartsAStream) {
  const std::vector<uint8_t> chunk = one_event_chunk();
  ChunkCompressor c;
  auto flags = [&] { return c.compress(chunk, {})[5]; };
  const uint8_t start = format::kChunkZstd | format::kChunkZstdStream | format::kChunkStreamStart;
  const uint8_t piece = format::kChunkZstd | format::kChunkZstdStream;
  c.set_level(3, true);
  EXPECT_EQ(flags(), start);
  EXPECT_EQ(flags(), piece);
  c.set_level(3, true);  // the next file's, at the same level
  EXPECT_EQ(flags(), start);
  EXPECT_EQ(flags(), piece);
  c.set_level(3, false);  // a sampled trace's: one frame each
  EXPECT_EQ(flags(), format::kChunkZstd);
  EXPECT_EQ(flags(), format::kChunkZstd);
  c.set_level(ChunkCompressor::kAuto, true);
  c.set_program_threads(1, 2);
  EXPECT_EQ(flags(), start);
  EXPECT_EQ(flags(), piece);
  c.set_program_threads(2, 2);  // the busy level
  EXPECT_EQ(flags(), start);
  EXPECT_EQ(flags(), piece);
}

// The default level follows the program's threads: as the idle level (5 with
// a minimum match of 6, zstd's hash chain and smaller tables) while they are fewer than the CPUs, as the busy level
// (2) when they are not.
TEST_F(TraceOutputTest, TheAutomaticLevelFollowsTheProgramsThreads) {
  auto encoder = std::make_unique<format::Encoder>();
  Chunks chunks;
  encoder->start(chunks, format::Mode::All, {.addresses = false, .columns = true});
  const uint64_t frames[2][3] = {{0x401000, 0x402000, 0x403000}, {0x401000, 0x402000, 0x404000}};
  for (uint64_t i = 0; i < 40000; ++i) {
    const format::AllocId id = encoder->alloc({.thread = format::ThreadId{static_cast<uint32_t>(1 + i % 3)}, .time_ns = i * 700,
                                               .size = 16 + (i * 7919) % 97, .backtrace = frames[i % 5 == 0]});
    encoder->free(id, format::ThreadId{1}, i * 700 + 300 * (i % 4), format::Func::Free);
  }
  encoder->flush();
  ASSERT_EQ(chunks.all.size(), 1u);
  const std::span<const uint8_t> chunk = chunks.all[0];
  auto compressed_size = [&](int level, size_t threads) {
    ChunkCompressor c;
    c.set_level(level);
    c.set_program_threads(threads, 2);
    return c.compress(chunk, {}).size();
  };
  static_assert(ChunkCompressor::kBusyLevel == 1 && ChunkCompressor::kIdleLevel == 5 &&
                ChunkCompressor::kIdleMinMatch == 6 && ChunkCompressor::kIdleHashLog == 16 &&
                ChunkCompressor::kIdleChainLog == 15);
  // The idle level as zstd's own context makes it.
  ZSTD_CCtx* const z = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 5);
  ZSTD_CCtx_setParameter(z, ZSTD_c_minMatch, 6);
  ZSTD_CCtx_setParameter(z, ZSTD_c_useRowMatchFinder, ZSTD_ps_disable);
  ZSTD_CCtx_setParameter(z, ZSTD_c_hashLog, 16);
  ZSTD_CCtx_setParameter(z, ZSTD_c_chainLog, 15);
  std::vector<uint8_t> out(ZSTD_compressBound(chunk.size()));
  const size_t idle = format::kChunkHeaderSize + ZSTD_compress2(z, out.data(), out.size(), chunk.data() + format::kChunkHeaderSize,
                                                                chunk.size() - format::kChunkHeaderSize);
  ZSTD_freeCCtx(z);
  const size_t busy = compressed_size(1, 0), level5 = compressed_size(5, 0), level6 = compressed_size(6, 0);
  ASSERT_NE(busy, idle);  // the payload tells the levels apart
  ASSERT_NE(level5, idle);
  // The idle level: level 5 with its minimum match raised and its match
  // finder changed (neither plain level 5 nor 6), within a few bytes of zstd's own context (this one is static and
  // sized for the level; on this small payload the two differ by ~3 bytes).
  const size_t automatic = compressed_size(ChunkCompressor::kAuto, 1);
  EXPECT_NE(automatic, level5);
  EXPECT_NE(automatic, level6);
  EXPECT_NEAR(static_cast<double>(automatic), static_cast<double>(idle), 8.0);
  EXPECT_EQ(compressed_size(ChunkCompressor::kAuto, 2), busy);
  EXPECT_EQ(compressed_size(ChunkCompressor::kAuto, 8), busy);
  EXPECT_EQ(compressed_size(6, 8), level6);  // a level that was set stays
  EXPECT_EQ(compressed_size(5, 1), level5);  // with zstd's own parameters
  // One session whose level changes back and forth: each chunk as if alone
  // (the busy level's call does not inherit the idle level's parameters).
  ChunkCompressor c;
  c.set_level(ChunkCompressor::kAuto);
  const std::pair<size_t, size_t> turns[] = {{1, automatic}, {2, busy}, {1, automatic}, {4, busy}};
  for (const auto& [threads, want] : turns) {
    c.set_program_threads(threads, 2);
    EXPECT_EQ(c.compress(chunk, {}).size(), want) << threads << " threads";
  }
}

// What the recorder cuts chunks by besides size (recorder.cc, chunk_due):
// the open chunk's bytes and the time it starts at (its prefix's: the event
// before it), none once sealed.
TEST_F(TraceOutputTest, TheOpenChunkTellsItsBytesAndItsStart) {
  auto encoder = std::make_unique<format::Encoder>();
  Chunks chunks;
  encoder->start(chunks, format::Mode::All, {.addresses = false, .columns = true, .time_unit_us = 32});
  EXPECT_EQ(encoder->open_bytes(), 0u);
  EXPECT_EQ(encoder->open_since_ns(), 0u);
  const uint64_t frames[] = {0x401000, 0x402000};
  uint64_t t = 5'000'000;
  for (int chunk = 0; chunk < 2; ++chunk) {
    const uint64_t start = chunk == 0 ? 0 : (t - 50'000) / 32'000 * 32'000;  // the last event's, in whole ticks
    size_t before = 0;
    for (int i = 0; i < 100; ++i, t += 100'000) {
      encoder->free(encoder->alloc({.thread = format::ThreadId{1}, .time_ns = t, .size = 16, .backtrace = frames}),
                    format::ThreadId{1}, t + 50'000, format::Func::Free);
      EXPECT_GT(encoder->open_bytes(), before);
      before = encoder->open_bytes();
      EXPECT_EQ(encoder->open_since_ns(), start);
    }
    encoder->flush();
    ASSERT_EQ(chunks.all.size(), static_cast<size_t>(chunk + 1));
    // The chunk's payload: the streams and their prefix, stream count and lengths.
    EXPECT_GT(chunks.all.back().size(), format::kChunkHeaderSize + before);
    EXPECT_LT(chunks.all.back().size(), format::kChunkHeaderSize + before + 40);
    EXPECT_EQ(encoder->open_bytes(), 0u);
    EXPECT_EQ(encoder->open_since_ns(), 0u);
  }
}

// Level 0: written as the encoder made them.
TEST_F(TraceOutputTest, LevelZeroWritesChunksRaw) {
  const std::vector<uint8_t> chunk = one_event_chunk();
  auto out = std::make_unique<TraceOutput>();
  const fs::path p = dir_ / "raw.trace";
  ASSERT_TRUE(out->open(p.c_str(), false, count_failure, 0));
  out->write_chunk(chunk);
  out->close();
  EXPECT_EQ(slurp(p), std::string(chunk.begin(), chunk.end()));
}

}  // namespace
}  // namespace memloupe::recorder
