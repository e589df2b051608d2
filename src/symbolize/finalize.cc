#include "symbolize/finalize.h"

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <unordered_set>

#include "format/symbols_encoder.h"
#include "format/wire.h"
#include "reader/bytes.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"
#include "symbolize/atomic_file.h"

namespace memloupe::symbolize {
namespace {

// What symbolisation needs from the events: the module map over time and
// each distinct backtrace address with the module it was first seen in.
struct Collected {
  ModuleMap modules;
  std::vector<AddressInModule> addresses;
  uint64_t events = 0;
  bool has_symbols = false;
  std::optional<Error> damage;
};

Expected<std::unique_ptr<reader::Reader>> open_native(const std::string& input) {
  auto opened = reader::Reader::open(input);
  if (!opened) return opened.error();
  const std::string& source = (*opened)->info().source_format;
  if (!source.empty()) return Error{input + " is a " + source + " trace; only memloupe traces are finalised"};
  return opened;
}

// Pass 1 over the events (tap->first rides on it).
Collected collect(reader::Reader& r, FinalizeTap* tap) {
  Collected c;
  c.has_symbols = r.has_symbols_section();
  std::unordered_set<uint64_t> seen;
  std::vector<uint64_t> unmapped;  // seen while no module covered them
  while (const format::Event* e = r.next()) {
    if (std::holds_alternative<format::SymbolDef>(*e)) continue;  // replaced or kept as a whole
    ++c.events;
    if (tap) tap->first(*e);
    if (const auto* alloc = std::get_if<format::Alloc>(e)) {
      // The other frames were seen with an earlier Alloc.
      const size_t fresh = std::min<size_t>(r.fresh_frames(), alloc->backtrace.size());
      for (uint64_t address : alloc->backtrace.first(fresh)) {
        if (!seen.insert(address).second) continue;
        if (auto m = c.modules.find(address)) {
          c.addresses.push_back({address, *m});
        } else {
          unmapped.push_back(address);
        }
      }
    } else if (const auto* load = std::get_if<format::ModuleLoad>(e)) {
      c.modules.load(*load);
    } else if (const auto* unload = std::get_if<format::ModuleUnload>(e)) {
      c.modules.unload(unload->start);
    }
  }
  for (uint64_t address : unmapped) {
    if (auto m = c.modules.find_any_time(address)) c.addresses.push_back({address, *m});
  }
  c.damage = r.error();
  return c;
}

// Pass 2 for the tap: the events again, as the compaction keeps them (the two
// agree when neither stopped at damage, the only case the index is written in).
std::optional<Error> second_pass(const std::string& input, FinalizeTap& tap) {
  auto opened = open_native(input);
  if (!opened) return opened.error();
  reader::Reader& r = **opened;
  while (const format::Event* e = r.next()) {
    if (!std::holds_alternative<format::SymbolDef>(*e)) tap.second(*e);
  }
  return r.error();
}

bool is(const reader::ChunkView& chunk, format::ChunkType type) {
  return chunk.type == static_cast<uint8_t>(type);
}

// The trace without its index chunks and, if `symbols`, its symbols chunks
// (the others are copied as stored).
std::vector<uint8_t> without(std::span<const uint8_t> trace, bool symbols) {
  const reader::ChunkList list = reader::scan_chunks(trace);
  std::vector<uint8_t> out(trace.begin(), trace.begin() + format::kPrologueSize);
  for (const reader::ChunkView& chunk : list.chunks) {
    if (is(chunk, format::ChunkType::AnalysisIndex)) continue;
    if (symbols && is(chunk, format::ChunkType::Symbols)) continue;
    const auto begin = trace.begin() + static_cast<ptrdiff_t>(chunk.offset);
    out.insert(out.end(), begin, begin + format::kChunkHeaderSize + chunk.stored.size());
  }
  return out;
}

void encode_symbols(const reader::SymbolTable& table, format::SymbolsEncoder& encoder) {
  std::vector<uint64_t> addresses;
  addresses.reserve(table.size());
  for (const auto& entry : table) addresses.push_back(entry.first);
  std::ranges::sort(addresses);  // ascending addresses encode smallest
  std::vector<format::SymbolFrame> frames;
  for (uint64_t address : addresses) {
    frames.clear();
    for (const reader::OwnedFrame& f : table.at(address)) {
      frames.push_back({f.function, f.file, f.line, f.column});
    }
    encoder.add(address, frames);
  }
}

}  // namespace

Expected<FinalizeStats> finalize_trace(const std::string& input, const std::string& output,
                                       const FinalizeOptions& options) {
  auto opened = open_native(input);
  if (!opened) return opened.error();
  reader::Reader& r = **opened;
  FinalizeStats stats;
  const bool replace_symbols = options.symbolize && r.has_symbols_section();
  if (replace_symbols && !options.resymbolize) {
    stats.already_symbolized = true;
    return stats;
  }
  auto bytes = reader::Bytes::map_file(input);
  if (!bytes) return bytes.error();

  // Three jobs that share no state, on up to three threads: the compaction
  // (which compresses on a thread of its own), and pass 1 (collect) followed
  // by symbolisation (which needs only pass 1's addresses) alongside the tap's
  // pass 2 (which needs pass 1 finished). Each job's failure surfaces through
  // its future, here.
  std::future<Expected<reader::Compacted>> compaction = std::async(std::launch::async, [&] {
    return reader::compact_trace((*bytes)->data(), {.zstd_level = options.zstd_level});
  });
  if (options.tap) options.tap->begin(r.info());
  Collected c = collect(r, options.tap);
  stats.events = c.events;
  stats.addresses = c.addresses.size();
  stats.modules = c.modules.modules().size();
  stats.damage = c.damage;

  std::future<reader::SymbolTable> symbols;
  if (options.symbolize) {
    symbols = std::async(std::launch::async, [&] {
      const auto start = std::chrono::steady_clock::now();
      Symbolizer symbolizer(options.symbolizer);
      reader::SymbolTable table;
      symbolize_all(symbolizer, c.modules, c.addresses, table);
      stats.symbolize_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      return table;
    });
  }
  // After damage no index is written, so pass 2 is not needed then.
  const bool want_index = options.tap && !stats.damage;
  if (want_index) {
    if (auto e = second_pass(input, *options.tap)) stats.damage = *e;
  }

  auto compacted = compaction.get();
  if (!compacted) return compacted.error();
  if (!stats.damage) stats.damage = compacted->damage;
  std::vector<uint8_t> out = without(compacted->bytes, replace_symbols);

  if (options.symbolize) {
    const reader::SymbolTable table = symbols.get();
    stats.symbolized = table.size();
    format::SymbolsEncoder encoder;
    encode_symbols(table, encoder);
    const size_t before = out.size();
    reader::append_symbols(out, encoder, options.zstd_level);
    // A finalised trace always has a symbols section, if only an empty chunk:
    // that is how readers (and `memloupe symbolize`) know it is finalised.
    if (out.size() == before) format::append_chunk(out, format::ChunkType::Symbols, {});
  }

  // An index summarises exactly the events of the file; after damage the two
  // reads may have stopped in different places, so none is written then.
  if (want_index && !stats.damage) {
    if (std::optional<std::vector<uint8_t>> index = options.tap->index(out)) {
      const size_t before = out.size();
      reader::append_chunk_compressed(out, format::ChunkType::AnalysisIndex, *index, options.zstd_level);
      stats.index_bytes = out.size() - before;
    }
  }

  auto file = AtomicFile::create(output);
  if (!file) return file.error();
  if (auto e = file->write(out)) return *e;
  if (auto e = file->commit()) return *e;
  stats.output_bytes = out.size();
  return stats;
}

}  // namespace memloupe::symbolize
