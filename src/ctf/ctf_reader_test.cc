#include "ctf/ctf_reader.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/ctf_test_support.h"

namespace memloupe::reader {
namespace {

using testing::read_all;
using testing::ReadAll;

// The sample trace's three packets (offsets from its packet headers).
constexpr uint64_t kLocationPacket = 317;
constexpr uint64_t kEventsPacket = 1164;
constexpr uint64_t kFileSize = 2390;

std::unique_ptr<Reader> open(std::vector<uint8_t> bytes) {
  auto r = Reader::from_bytes(std::move(bytes), "test.ctf");
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? std::move(r.value()) : nullptr;
}

std::vector<uint8_t> viewer() { return testing::read_file(testing::viewer_trace_path()); }

void put_u64(std::vector<uint8_t>& b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u16(std::vector<uint8_t>& b, size_t at, uint16_t v) {
  b[at] = static_cast<uint8_t>(v);
  b[at + 1] = static_cast<uint8_t>(v >> 8);
}

// The figures listed in tests/data/memtrace/README.md.
TEST(CtfReader, SampleTraceAgreesWithItsReadme) {
  auto reader = open(viewer());
  ASSERT_TRUE(reader);
  ReadAll r = read_all(*reader);
  ASSERT_FALSE(r.error) << r.error->message;

  const CtfDetails* d = ctf_details(*reader);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->version, 2);
  EXPECT_EQ(d->sample_rate, 0.1);
  EXPECT_EQ(d->word_size, 64u);
  EXPECT_EQ(d->pid, 40409u);
  EXPECT_EQ(d->packets, 3u);
  EXPECT_EQ(d->location_events, 19u);
  EXPECT_EQ(r.symbol_events.size(), 19u);
  EXPECT_EQ(r.symbols.size(), 19u);  // distinct codes
  EXPECT_EQ(r.allocs.size(), 54u);
  EXPECT_EQ(d->long_allocs, 25u);
  EXPECT_EQ(d->short_allocs, 29u);
  EXPECT_EQ(d->promotions, 28u);
  EXPECT_EQ(d->collections, 26u);
  uint64_t frames = 0;
  for (const auto& a : r.allocs) frames += a.backtrace.size();
  EXPECT_EQ(frames, d->backtrace_frames);
  EXPECT_NEAR(static_cast<double>(frames) / 54, 19.3, 0.05);

  EXPECT_EQ(r.info.source_format, "memtrace-ctf v2");
  EXPECT_EQ(r.info.pid, 40409u);
  EXPECT_EQ(r.info.bytes_per_sample, 80u);  // 8-byte words at rate 0.1
  EXPECT_EQ(r.info.pointer_size, 8);
  EXPECT_EQ(r.info.host, "vdc-qws-u20029b");
  EXPECT_EQ(r.info.start_wall_ns, 1656506519214892000u);
  EXPECT_TRUE(r.info.executable.ends_with("/generate_test_data.exe"));
  EXPECT_EQ(d->runtime_params.substr(0, 8), "a=2,b=1,");
  EXPECT_EQ(d->context, "");
  EXPECT_EQ(reader->events_read(), 19 + 54 + 28 + 26u);
  EXPECT_EQ(reader->offset(), kFileSize);
}

TEST(CtfReader, SampleTraceEventsAreConsistent) {
  auto reader = open(viewer());
  ASSERT_TRUE(reader);
  ReadAll r = read_all(*reader);
  // Locations arrive before the allocations that use them.
  EXPECT_TRUE(r.symbols_before_use);
  // Ids are the allocations' positions; frees and promotions name earlier ones.
  for (size_t i = 0; i < r.allocs.size(); ++i) EXPECT_EQ(r.allocs[i].id, i);
  std::vector<int> freed(r.allocs.size()), promoted(r.allocs.size());
  for (const auto& ref : r.refs) {
    ASSERT_LT(ref.id, r.allocs.size());
    EXPECT_GE(ref.time_ns, r.allocs[ref.id].time_ns);
    ++(ref.kind == 'f' ? freed : promoted)[ref.id];
  }
  // A minor-heap block is either promoted or dies young, and the trace ends
  // before any major collection: every allocation has exactly one of the two
  // (28 + 26 = 54), except that the one major-heap block can only be collected.
  EXPECT_EQ(ctf_details(*reader)->allocs_by_source, (std::array<uint64_t, 3>{53, 1, 0}));
  EXPECT_EQ(r.allocs[36].size, 8000u);  // 1000 words: too big for the minor heap
  EXPECT_EQ(freed[36], 1);
  for (size_t i = 0; i < r.allocs.size(); ++i) {
    EXPECT_EQ(freed[i] + promoted[i], 1) << i;
    EXPECT_EQ(r.allocs[i].size % 8, 0u);
    EXPECT_GE(r.allocs[i].n_samples, 1u);
  }
  // The first allocation, decoded by hand: 400 bytes (50 words), 2 samples,
  // Base's Array0.create called from Generate_test_data.go, line 59.
  const auto& first = r.allocs[0];
  EXPECT_EQ(first.size, 400u);
  EXPECT_EQ(first.n_samples, 2u);
  EXPECT_EQ(first.time_ns, 895000u);
  ASSERT_EQ(first.backtrace.size(), 4u);
  EXPECT_EQ(first.backtrace[0], 0x4c839cu);  // innermost first
  EXPECT_EQ(first.backtrace[3], 0x40be60u);
  EXPECT_EQ(r.symbols.at(0x4c839c)[0].function, "Base__Array0.create");
  EXPECT_EQ(r.symbols.at(0x40be60).size(), 0u);  // a code without locations
  // Inlined frames, innermost first: main is inlined into the module's top level.
  const auto& main = r.symbols.at(0x40cb64);
  ASSERT_EQ(main.size(), 2u);
  EXPECT_EQ(main[0].function, "Bin_prefix_generate_test_data__Generate_test_data.main");
  EXPECT_EQ(main[0].line, 86u);
  EXPECT_EQ(main[0].column, 2u);
  EXPECT_EQ(main[1].line, 96u);
}

TEST(CtfReader, EveryTruncationDeliversWholePacketsThenNamesTheEnd) {
  const std::vector<uint8_t> full = viewer();
  for (size_t cut = 1; cut < full.size(); ++cut) {
    std::vector<uint8_t> bytes(full.begin(), full.begin() + static_cast<long>(cut));
    auto opened = Reader::from_bytes(bytes, "cut.ctf");
    if (cut < kLocationPacket) {  // the trace-info packet itself is cut
      ASSERT_FALSE(opened.ok()) << cut;
      // (Fewer than 4 bytes do not even show the magic.)
      if (cut >= 4) {
        EXPECT_NE(opened.error().message.find("ends early"), std::string::npos);
      }
      continue;
    }
    ASSERT_TRUE(opened.ok()) << cut;
    ReadAll r = read_all(**opened);
    if (cut == kLocationPacket || cut == kEventsPacket) {  // between packets: looks complete
      EXPECT_FALSE(r.error);
      EXPECT_EQ(r.events, cut == kLocationPacket ? 0u : 19u);
      continue;
    }
    ASSERT_TRUE(r.error) << cut;
    const uint64_t packet = cut < kEventsPacket ? kLocationPacket : kEventsPacket;
    EXPECT_EQ(r.error->offset, packet) << cut;
    EXPECT_EQ(r.events, cut < kEventsPacket ? 0u : 19u) << cut;
    EXPECT_EQ(r.error->message.rfind("trace ends early at offset " + std::to_string(packet) + " after", 0),
              0u)
        << r.error->message;
  }
}

TEST(CtfReader, EveryByteFlipIsReadOrReportedWithAnOffset) {
  const std::vector<uint8_t> full = viewer();
  for (size_t at = 0; at < full.size(); ++at) {
    for (uint8_t mask : {0x01, 0xFF}) {
      std::vector<uint8_t> bytes = full;
      bytes[at] ^= mask;
      auto opened = Reader::from_bytes(bytes, "flip.ctf");
      if (!opened.ok()) {
        EXPECT_FALSE(opened.error().message.empty());
        continue;
      }
      ReadAll r = read_all(**opened);
      if (r.error) {
        EXPECT_LE(r.error->offset, full.size()) << at;
        EXPECT_EQ(r.error->message.find("at offset " + std::to_string(r.error->offset)) == 0 ||
                      r.error->message.find("trace ends early at offset") == 0,
                  true)
            << r.error->message;
      }
    }
  }
}

TEST(CtfReader, RejectsWhatIsNotAReadableCtfTrace) {
  std::vector<uint8_t> bytes = viewer();
  put_u16(bytes, 28, 4);
  auto newer = Reader::from_bytes(bytes, "v4.ctf");
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.error().message.find("version 4 is newer"), std::string::npos) << newer.error().message;

  put_u16(bytes, 28, 1);
  auto older = Reader::from_bytes(bytes, "v1.ctf");
  ASSERT_FALSE(older.ok());
  EXPECT_NE(older.error().message.find("version 1 is not supported"), std::string::npos);

  bytes = viewer();
  bytes[0x42 + 12] = 7;  // word size
  auto word = Reader::from_bytes(bytes, "w.ctf");
  ASSERT_FALSE(word.ok());
  EXPECT_EQ(word.error().offset, 0x42u + 12);

  // Not CTF at all: open_ctf itself refuses.
  auto junk = open_ctf(Bytes::from_vector({1, 2, 3, 4, 5}, "junk"));
  ASSERT_FALSE(junk.ok());
  EXPECT_EQ(junk.error().offset, 0u);
}

TEST(CtfReader, SkipsAnotherProcesssPackets) {
  std::vector<uint8_t> bytes = viewer();
  put_u64(bytes, kEventsPacket + 30, 12345);  // the events packet's pid
  auto reader = open(bytes);
  ReadAll r = read_all(*reader);
  EXPECT_FALSE(r.error);
  EXPECT_EQ(r.allocs.size(), 0u);
  EXPECT_EQ(r.symbol_events.size(), 19u);
  EXPECT_EQ(ctf_details(*reader)->skipped_packets, 1u);
}

TEST(CtfReader, PacketChecksNameThePacket) {
  // Fields of the events packet's (version 2) header.
  constexpr size_t kVerifyIx = 38, kVerifyValue = 42, kAllocBegin = 50, kAllocEnd = 58;
  struct Case {
    std::vector<std::pair<size_t, uint64_t>> patches;  // u16 for kVerifyIx, else u64
    const char* message;
    size_t events;  // delivered before the error
  };
  const Case cases[] = {
      // Slot 5 of the cache holds 0 when the events packet starts, not 1234.
      {{{kVerifyIx, 5}, {kVerifyValue, 1234}}, "cache verification failed", 19},
      // All 127 events are read; the count check comes at the packet's end.
      {{{kAllocEnd, 55}}, "declares allocation ids [0, 55) but holds 54", 127},
      // Room for 53: the 54th allocation (alloc 53) fails after 19 locations,
      // allocs 0-36, their 36 promotions/collections, and allocs 37-52.
      {{{kAllocBegin, 1}}, "more allocations than the packet's id range [1, 54)", 19 + 37 + 36 + 16},
  };
  for (const Case& c : cases) {
    std::vector<uint8_t> bytes = viewer();
    for (auto [field, value] : c.patches) {
      if (field == kVerifyIx) {
        put_u16(bytes, kEventsPacket + field, static_cast<uint16_t>(value));
      } else {
        put_u64(bytes, kEventsPacket + field, value);
      }
    }
    auto reader = open(bytes);
    ReadAll r = read_all(*reader);
    ASSERT_TRUE(r.error) << c.message;
    EXPECT_NE(r.error->message.find(c.message), std::string::npos) << r.error->message;
    EXPECT_EQ(r.events, c.events) << c.message;
  }
}

TEST(CtfReader, EventOutsideItsPacketsTimeIsAnError) {
  std::vector<uint8_t> bytes = viewer();
  // time_end := time_begin: the first event after the packet start is out of bounds.
  std::memcpy(&bytes[kEventsPacket + 16], &bytes[kEventsPacket + 8], 8);
  auto reader = open(bytes);
  ReadAll r = read_all(*reader);
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("outside its packet"), std::string::npos) << r.error->message;
  EXPECT_GT(r.error->offset, kEventsPacket);
}

}  // namespace
}  // namespace memloupe::reader
