#include "ctf/ctf_writer.h"

#include <gtest/gtest.h>

#include <deque>
#include <random>

#include "ctf/ctf_packet.h"
#include "ctf/ctf_reader.h"
#include "support/ctf_test_support.h"

namespace memloupe::reader {
namespace {

using testing::read_all;
using testing::ReadAll;

// Collects the writer's packets, checking each one's header on the way.
struct Collector {
  std::vector<uint8_t> bytes;
  std::vector<ctf::PacketHeader> packets;
  void operator()(std::span<const uint8_t> packet) {
    const uint64_t at = bytes.size();
    bytes.insert(bytes.end(), packet.begin(), packet.end());
    auto h = ctf::parse_packet_header(bytes, at);
    ASSERT_TRUE(h.ok()) << h.error().message;
    EXPECT_EQ(h->version, 3);
    EXPECT_EQ(h->size, packet.size());
    EXPECT_LE(packet.size(), ctf::kMaxPacketBytes);
    EXPECT_LE(h->time_end - h->time_begin, ctf::kMaxPacketSpanUs);
    packets.push_back(*h);
  }
};

ReadAll reread(const std::vector<uint8_t>& bytes) {
  auto reader = Reader::from_bytes(bytes, "written.ctf");
  EXPECT_TRUE(reader.ok()) << reader.error().message;
  return read_all(**reader);
}

TEST(CtfWriter, SampleTraceRoundTrips) {
  const std::vector<uint8_t> sample = testing::read_file(testing::viewer_trace_path());
  auto first = Reader::from_bytes(sample, "viewer");
  ASSERT_TRUE(first.ok());
  const ReadAll before = read_all(**first);
  ASSERT_FALSE(before.error);

  // Write while reading: the writer sees the symbols as any consumer would.
  auto second = Reader::from_bytes(sample, "viewer");
  Reader& in = **second;
  Collector out;
  CtfWriter writer(in.info(), in.symbols(), std::ref(out));
  while (const format::Event* e = in.next()) writer.write(*e);
  writer.finish();

  ReadAll after = reread(out.bytes);
  ASSERT_FALSE(after.error) << after.error->message;
  EXPECT_EQ(after.info.source_format, "memtrace-ctf v3");
  EXPECT_EQ(after.info.pid, before.info.pid);
  EXPECT_EQ(after.info.host, before.info.host);
  EXPECT_EQ(after.info.executable, before.info.executable);
  EXPECT_EQ(after.info.start_wall_ns, before.info.start_wall_ns);
  EXPECT_EQ(after.info.bytes_per_sample, before.info.bytes_per_sample);
  EXPECT_EQ(after.allocs, before.allocs);
  EXPECT_EQ(after.refs, before.refs);
  EXPECT_TRUE(after.symbols_before_use);
  ASSERT_EQ(after.symbols.size(), before.symbols.size());
  for (const auto& [address, frames] : before.symbols) {
    ASSERT_TRUE(after.symbols.contains(address));
    EXPECT_TRUE(testing::same_frames(after.symbols.at(address), frames)) << address;
  }
  // memtrace's rule for the short form, applied to what was written.
  uint64_t short_form = 0;
  for (const auto& a : before.allocs) short_form += a.size >= 8 && a.size <= 128 && a.n_samples == 1;
  EXPECT_EQ(writer.stats().short_allocs, short_form);
  EXPECT_EQ(writer.stats().short_allocs + writer.stats().long_allocs, 54u);
  EXPECT_EQ(writer.stats().location_events, 19u);
  EXPECT_EQ(writer.stats().unmatched, 0u);
}

// A random native-looking stream: deep, recursive and rapidly changing stacks,
// some addresses without symbols, long pauses, frees and promotions.
struct Stream {
  format::TraceInfo info;
  SymbolTable symbols;
  std::vector<format::Event> events;
  std::deque<std::vector<uint64_t>> backtraces;  // storage for the events' spans
};

Stream random_stream(uint64_t seed, size_t steps) {
  std::mt19937_64 rng(seed);
  Stream s;
  s.info.pid = 4242;
  s.info.host = "host";
  s.info.executable = "/usr/bin/prog";
  s.info.argv = {"prog", "--flag"};
  s.info.start_wall_ns = 1'700'000'000'123'456'789;
  s.info.bytes_per_sample = 4096;
  std::vector<uint64_t> pool;
  for (uint64_t k = 0; k < 600; ++k) {
    const uint64_t address = 0x400000 + k * 0x10;
    pool.push_back(address);
    if (k % 3 == 2) continue;  // unsymbolised
    auto& frames = s.symbols[address];
    for (unsigned i = 0; i <= k % 3; ++i) {
      frames.push_back(OwnedFrame{"fn" + std::to_string(k) + "_" + std::to_string(i),
                                  k % 7 == 0 ? "" : "src/file" + std::to_string(k % 40) + ".cc",
                                  static_cast<uint32_t>(k), static_cast<uint32_t>(k % 100)});
    }
  }
  uint64_t now = 0;
  std::vector<uint64_t> live;
  std::vector<bool> promoted;
  std::vector<uint64_t> previous{pool[0]};
  uint64_t next_id = 0;
  for (size_t step = 0; step < steps; ++step) {
    now += rng() % 100 == 0 ? 40'000'000'000 : rng() % 5000;  // some 40 s pauses
    const unsigned what = rng() % 10;
    if (what < 5 || live.empty()) {
      std::vector<uint64_t> bt;
      switch (rng() % 3) {
        case 0:  // keep an outer part of the previous stack
          bt.assign(previous.begin() + static_cast<long>(rng() % previous.size()), previous.end());
          for (int i = rng() % 6; i > 0; --i) bt.insert(bt.begin(), pool[rng() % pool.size()]);
          break;
        case 1:  // recursion
          bt.assign(1 + rng() % 250, pool[rng() % 8]);
          bt.push_back(pool[599]);
          break;
        default:
          for (int i = 1 + rng() % 60; i > 0; --i) bt.push_back(pool[rng() % pool.size()]);
      }
      previous = bt;
      s.backtraces.push_back(std::move(bt));
      format::Alloc a;
      a.id = format::AllocId{next_id++};
      a.time_ns = now;
      a.size = rng() % 4 == 0 ? rng() % 1'000'000 : rng() % 200;
      a.n_samples = rng() % 4 == 0 ? 1 + rng() % 5 : 1;
      a.backtrace = s.backtraces.back();
      s.events.push_back(a);
      live.push_back(a.id.value);
      promoted.push_back(false);
    } else if (what < 8) {
      const size_t i = rng() % live.size();
      s.events.push_back(format::Free{format::AllocId{live[i]}, format::ThreadId{1}, now, format::Func::Free});
      live.erase(live.begin() + static_cast<long>(i));
    } else if (what == 8) {
      const uint64_t id = live[rng() % live.size()];
      if (!promoted[id]) s.events.push_back(format::Promote{format::AllocId{id}, now});
      promoted[id] = true;
    } else {  // events memtrace has no place for
      s.events.push_back(format::RssSample{now, 1 << 20});
    }
  }
  return s;
}

TEST(CtfWriter, RandomStreamsRoundTrip) {
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    Stream s = random_stream(seed, 30000);
    Collector out;
    CtfWriter writer(s.info, s.symbols, std::ref(out));
    for (const format::Event& e : s.events) writer.write(e);
    writer.write(format::Free{format::AllocId{1u << 30}, {}, 0, format::Func::Free});  // never allocated
    writer.finish();
    EXPECT_EQ(writer.stats().unmatched, 1u);
    EXPECT_GT(out.packets.size(), 10u);

    ReadAll r = reread(out.bytes);
    ASSERT_FALSE(r.error) << r.error->message;
    EXPECT_EQ(r.info.bytes_per_sample, 4096u);
    EXPECT_EQ(r.info.start_wall_ns, s.info.start_wall_ns / 1000 * 1000);
    EXPECT_TRUE(r.symbols_before_use);

    // What the stream should read back as: sizes in whole words, times in whole us.
    auto us = [](uint64_t t) { return t / 1000 * 1000; };
    std::vector<testing::AllocRec> allocs;
    std::vector<testing::RefRec> refs;
    for (const format::Event& e : s.events) {
      if (auto* a = std::get_if<format::Alloc>(&e)) {
        allocs.push_back({a->id.value, us(a->time_ns), (a->size + 7) / 8 * 8, a->n_samples, 0,
                          {a->backtrace.begin(), a->backtrace.end()}});
      } else if (auto* f = std::get_if<format::Free>(&e)) {
        refs.push_back({'f', f->id.value, us(f->time_ns)});
      } else if (auto* p = std::get_if<format::Promote>(&e)) {
        refs.push_back({'p', p->id.value, us(p->time_ns)});
      }
    }
    ASSERT_EQ(r.allocs.size(), allocs.size());
    for (size_t i = 0; i < allocs.size(); ++i) ASSERT_EQ(r.allocs[i], allocs[i]) << "alloc " << i;
    EXPECT_EQ(r.refs, refs);

    const std::vector<OwnedFrame> unknown{{"??", "<unknown>", 1, 1}};
    for (const auto& [address, frames] : r.symbols) {
      auto known = s.symbols.find(address);
      EXPECT_TRUE(testing::same_frames(frames, known == s.symbols.end() ? unknown : known->second))
          << std::hex << address;
    }
    // Each address's location is written once.
    EXPECT_EQ(r.symbol_events.size(), r.symbols.size());
  }
}

TEST(CtfWriter, EveryCallTracesKeepTheirSizes) {
  format::TraceInfo info;
  info.mode = format::Mode::All;
  info.start_wall_ns = 5'000'000'000;
  SymbolTable symbols;
  Collector out;
  CtfWriter writer(info, symbols, std::ref(out));
  const std::vector<uint64_t> bt{0x10, 0x20};
  writer.write(format::Alloc{format::AllocId{0}, {}, 1000, 100, 0x1234, 0, 1, format::Func::Malloc, {}, bt});
  writer.write(format::Alloc{format::AllocId{1}, {}, 2000, 8, 0x5678, 0, 1, format::Func::Malloc, {}, bt});
  writer.finish();
  ReadAll r = reread(out.bytes);
  ASSERT_EQ(r.allocs.size(), 2u);
  // Rate 1 per word: memtrace's "samples / rate x 8" is the size in whole words.
  EXPECT_EQ(r.info.bytes_per_sample, 8u);
  // Every word sampled: every call is in the trace, so it reads back as one (exact counts).
  EXPECT_EQ(r.info.mode, format::Mode::All);
  EXPECT_EQ(r.allocs[0].size, 104u);
  EXPECT_EQ(r.allocs[0].n_samples, 13u);
  EXPECT_EQ(r.allocs[1].n_samples, 1u);
  EXPECT_EQ(writer.stats().short_allocs, 1u);  // 1 word, 1 sample
  // 100 B is not a whole number of words: said, as the one loss.
  ASSERT_EQ(writer.losses().size(), 1u);
  EXPECT_NE(writer.losses()[0].find("1 sizes"), std::string::npos) << writer.losses()[0];
}

TEST(CtfWriter, CacheVerifierIsWrittenAndChecked) {
  Stream s = random_stream(9, 20000);
  Collector out;
  CtfWriter writer(s.info, s.symbols, std::ref(out));
  for (const format::Event& e : s.events) writer.write(e);
  writer.finish();
  // Find an events packet that carries a check and falsify its expected value.
  for (const ctf::PacketHeader& h : out.packets) {
    if (h.verify_ix == ctf::kNoVerify) continue;
    std::vector<uint8_t> bytes = out.bytes;
    bytes[h.offset + 44] ^= 1;  // cache_verify_val (v3 layout)
    ReadAll r = reread(bytes);
    ASSERT_TRUE(r.error);
    EXPECT_EQ(r.error->offset, h.offset);
    EXPECT_NE(r.error->message.find("cache verification"), std::string::npos);
    return;
  }
  FAIL() << "no events packet carried a cache check";
}

}  // namespace
}  // namespace memloupe::reader
