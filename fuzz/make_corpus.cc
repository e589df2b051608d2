// Writes the reader fuzzer's seed corpus: small real traces in both modes, raw
// (as the recorder writes them) and finalised (compressed, with symbols and a
// types table; with an uncompressed analysis index too), with every kind of event.
// Usage: reader_fuzz_corpus OUTPUT_DIR
#include <zstd.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analysis/index.h"
#include "finalize/compact.h"
#include "format/encoder.h"
#include "format/snapshot_annex.h"
#include "format/snapshot_writer.h"
#include "format/symbols_encoder.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"
#include "types/type_table.h"

namespace {

using namespace memloupe;
using namespace memloupe::format;

class Sink final : public ChunkSink {
 public:
  void write_chunk(std::span<const uint8_t> c) noexcept override {
    bytes.insert(bytes.end(), c.begin(), c.end());
  }
  std::vector<uint8_t> bytes;
};

// `addresses`: Mode::All with per-event addresses (header mode 1) or without (2).
// Without them, in ticks of 32 µs, as the recorder writes --all (the others in µs).
std::vector<uint8_t> trace(Mode mode, unsigned allocs, bool addresses = true) {
  Sink sink;
  sink.bytes.resize(kMaxFileHeader);
  const uint32_t unit = mode == Mode::All && !addresses ? 32 : 1;
  HeaderFields h{mode, mode == Mode::All ? 0u : 4096u, 1234, 1700000000000000000ull, 5000,
                 "host", "/bin/prog", std::string_view("prog\0-x\0", 8), addresses, unit};
  sink.bytes.resize(encode_file_header(h, sink.bytes));
  auto enc = std::make_unique<Encoder>(
      sink, mode, Encoder::Options{.addresses = addresses, .columns = false, .time_unit_us = unit});
  uint64_t t = 0;
  const uint8_t build_id[] = {0xde, 0xad, 0xbe, 0xef};
  enc->module_load({t, 0x400000, 0x401000, 0, "/bin/prog", build_id});
  enc->thread_start(ThreadId{0}, t, 100);
  enc->thread_name(ThreadId{0}, t, "main");
  std::vector<AllocId> live;
  for (unsigned i = 0; i < allocs; ++i) {
    const uint64_t bt[] = {0x401000 + (i % 3) * 16, 0x401100 + (i % 2) * 8, 0x401200, 0x401300};
    AllocRecord r{ThreadId{i % 4 == 3 ? 1u : 0u}, t += 700, 16 + (i % 5) * 8,
                  0x7f0000001000ull + (i % 7) * 64, i % 6 == 0 ? 64u : 0u, i % 9 == 0 ? 2u : 1u,
                  i % 2 ? Func::New : Func::Malloc, std::span(bt).first(1 + i % 4)};
    if (i % 5 == 4 && !live.empty()) {
      r.func = Func::Realloc;
      live.back() = enc->realloc(live.back(), r);
    } else {
      live.push_back(enc->alloc(r));
    }
    if (i % 3 == 2) {
      enc->free(live.front(), ThreadId{0}, t += 50, i % 2 ? Func::DeleteSized : Func::Free);
      live.erase(live.begin());
    }
    if (i == allocs / 2) enc->flush();
  }
  enc->rss(t, 1 << 20);
  enc->marker(ThreadId{0}, t, "phase 2");
  CallTotals totals{t, {}};
  totals.totals[0] = {allocs, allocs * 24ull};
  enc->call_totals(totals);
  enc->thread_end(ThreadId{1}, t);
  enc->module_unload(t, 0x400000);
  enc->trace_end(t += 1000, EndReason::Exit);
  return sink.bytes;
}

// Column form; level 0 leaves the chunks uncompressed, so mutations reach the
// column decoding instead of failing in zstd.
std::vector<uint8_t> finalised(std::vector<uint8_t> raw, int level) {
  std::vector<uint8_t> out = finalize::compact_trace(raw, {.zstd_level = level})->bytes;
  SymbolsEncoder symbols;
  const SymbolFrame frames[] = {{"inlined_helper", "util.h", 12, 3}, {"main", "main.cc", 40, 7}};
  for (uint64_t a = 0x401000; a < 0x401400; a += 0x100) symbols.add(a, frames);
  reader::append_symbols(out, symbols, level);
  // The types table, as finalise writes it behind the symbols (every rule and shape).
  types::TypeTable t;
  t[0x401000] = {"ns::Point", 16, 16, types::TypeShape::Object, types::TypeRule::InlinedConstructor};
  t[0x401010] = {"ns::Elem[]", 8, 0, types::TypeShape::Array, types::TypeRule::Allocator};
  t[0x401020] = {"ns::Shared", 24, 40, types::TypeShape::Object, types::TypeRule::MakeShared};
  t[0x401100] = {"", 24, 24, types::TypeShape::Object, types::TypeRule::Unknown};
  t[0x401108] = {"ns::Poly", 32, 32, types::TypeShape::Object, types::TypeRule::MakeUnique};
  reader::append_chunk_compressed(out, ChunkType::Types, types::encode_types(t), level);
  return out;
}

// A heap snapshot in two parts of each kind (two chunks: the writer cuts
// chunks by size, so a small buffer is not possible; two snapshots instead),
// appended to `trace` as the recorder writes them.
std::vector<uint8_t> with_snapshots(std::vector<uint8_t> trace) {
  Sink sink;
  std::vector<uint8_t> buffer(SnapshotWriter::kBufferBytes);
  for (uint32_t number = 0; number < 2; ++number) {
    SnapshotWriter w(sink, buffer.data(), number);
    w.begin({1000u + number, number == 1, number == 1 ? "exit" : "inside", 3, 1});
    w.root({SnapshotRoot::Global, 0, 100, 0x404000, 64, 0});
    w.root({SnapshotRoot::Stack, 1, 100, 0x7ffd0000, 256, 0x401234});
    w.root({SnapshotRoot::Register, 1, 100, 0, 128, 0});
    w.root({SnapshotRoot::Tls, 2, 101, 0x7f0000000f00, 16, 0x400000});
    w.block(0x7f0000001000, 32, 0);
    w.block(0x7f0000001040, 64, 1);
    w.block(0x7f0000002000, 24, 7);
    w.edge(0, 0, false, 8);
    w.edge(0, 1, true, 16);
    w.edge(1, 2, false, 0);
    w.edge(3, 0, false, 8);
    w.edge(4, 1, false, 0);
    w.edge(5, 2, true, 0);
    w.edge(6, 0, false, 0);
    w.end(4096, 1000);
  }
  trace.insert(trace.end(), sink.bytes.begin(), sink.bytes.end());
  return trace;
}

// The finaliser's annex of snapshot 0 appended, uncompressed (so mutations
// reach its decoder): names, stacks, sites, modules, threads.
std::vector<uint8_t> with_annex(std::vector<uint8_t> trace) {
  const std::vector<SnapshotName> names{{0x404000, 16, "g_list", "list.c", 7}, {0x404010, 48, ".data", "", 0}};
  const uint64_t stack_0[] = {0x401234, 0x401300}, stack_1[] = {0x401400};
  const std::span<const uint64_t> stacks[] = {stack_0, stack_1};
  const std::vector<uint32_t> stack_plus_one{1, 2, 0};
  const std::vector<uint64_t> sizes{30, 60, 0};
  const uint8_t id[] = {0x12, 0x34};
  const std::vector<SnapshotModule> modules{{0x400000, 0x405000, 0, "/bin/p", id}};
  const std::vector<SnapshotThread> threads{{0, 100, "main"}, {1, 101, ""}};
  for (const auto& p : snapshot_annex_payloads(0, {names, stacks, stack_plus_one, sizes, modules, threads}))
    append_chunk(trace, ChunkType::Snapshot, p);
  return trace;
}

// The finalised trace with its analysis index appended uncompressed (so
// mutations reach the index decoder), built from one read as the finaliser does
// (the symbols' SymbolDefs are counted by finish(), not added).
std::vector<uint8_t> indexed(std::vector<uint8_t> trace) {
  auto events = reader::Reader::from_bytes(trace);
  analysis::IndexBuilder builder((*events)->info());
  while (const Event* e = (*events)->next())
    if (!std::holds_alternative<SymbolDef>(*e)) builder.add(*e);
  append_chunk(trace, ChunkType::AnalysisIndex, *builder.finish(trace));
  return trace;
}

// Column chunks of ~200 bytes as the recorder writes them since format
// version 3: pieces of one zstd stream (docs/FORMAT.md §3), the first starting
// it; the rest of the file as it is.
std::vector<uint8_t> as_stream(const std::vector<uint8_t>& trace) {
  const std::vector<uint8_t> columns = finalize::compact_trace(trace, {.zstd_level = 0, .max_events_payload = 200})->bytes;
  const reader::ChunkList list = reader::scan_chunks(columns);
  std::vector<uint8_t> out(columns.begin(), columns.begin() + kPrologueSize);
  ZSTD_CCtx* z = ZSTD_createCCtx();
  bool start = true;
  for (const reader::ChunkView& c : list.chunks) {
    if (c.type != static_cast<uint8_t>(ChunkType::EventsColumns)) {
      append_chunk(out, static_cast<ChunkType>(c.type), c.stored);
      continue;
    }
    std::vector<uint8_t> piece(ZSTD_compressBound(c.stored.size()) + 64);
    ZSTD_outBuffer o{piece.data(), piece.size(), 0};
    ZSTD_inBuffer in{c.stored.data(), c.stored.size(), 0};
    while (ZSTD_compressStream2(z, &o, &in, ZSTD_e_flush) != 0) {
    }
    piece.resize(o.pos);
    const uint8_t flags = kChunkZstd | kChunkZstdStream | (start ? kChunkStreamStart : 0);
    append_chunk(out, ChunkType::EventsColumns, flags, piece, static_cast<uint32_t>(c.stored.size()));
    start = false;
  }
  ZSTD_freeCCtx(z);
  return out;
}

bool write(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  bool ok = write(dir + "/sampled_raw.mlt", trace(Mode::Sampled, 12)) &&
            write(dir + "/all_raw.mlt", trace(Mode::All, 30)) &&
            write(dir + "/sampled_final.mlt", finalised(trace(Mode::Sampled, 12), 3)) &&
            write(dir + "/all_final.mlt", finalised(trace(Mode::All, 30), 3)) &&
            write(dir + "/sampled_columns.mlt", finalised(trace(Mode::Sampled, 12), 0)) &&
            write(dir + "/all_columns.mlt", finalised(trace(Mode::All, 30), 0)) &&
            write(dir + "/sampled_indexed.mlt", indexed(finalised(trace(Mode::Sampled, 12), 0))) &&
            write(dir + "/all_indexed.mlt", indexed(finalised(trace(Mode::All, 30), 0))) &&
            write(dir + "/all_snapshots.mlt", with_snapshots(trace(Mode::All, 30))) &&
            write(dir + "/all_noaddr_raw.mlt", trace(Mode::All, 30, false)) &&
            write(dir + "/all_stream.mlt", as_stream(trace(Mode::All, 30, false))) &&
            write(dir + "/all_noaddr_columns.mlt", finalised(trace(Mode::All, 30, false), 0)) &&
            write(dir + "/all_noaddr_indexed.mlt", indexed(finalised(trace(Mode::All, 30, false), 0))) &&
            write(dir + "/all_snapshots_annex.mlt", with_annex(with_snapshots(trace(Mode::All, 30))));
  if (!ok) std::perror(dir.c_str());
  return ok ? 0 : 1;
}
