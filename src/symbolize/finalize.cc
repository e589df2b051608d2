#include "symbolize/finalize.h"

#include <algorithm>
#include <chrono>
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

Expected<Collected> collect(const std::string& input, FinalizeTap* tap) {
  auto opened = reader::Reader::open(input);
  if (!opened) return opened.error();
  reader::Reader& r = **opened;
  if (!r.info().source_format.empty()) {
    return Error{input + " is a " + r.info().source_format + " trace; only memloupe traces are finalised"};
  }
  Collected c;
  c.has_symbols = r.has_symbols_section();
  if (tap) tap->begin(r.info());
  std::unordered_set<uint64_t> seen;
  std::vector<uint64_t> unmapped;  // seen while no module covered them
  while (const format::Event* e = r.next()) {
    if (std::holds_alternative<format::SymbolDef>(*e)) continue;  // replaced or kept as a whole
    ++c.events;
    if (tap) tap->first(*e);
    if (const auto* alloc = std::get_if<format::Alloc>(e)) {
      for (uint64_t address : alloc->backtrace) {
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
  auto collected = collect(input, options.tap);
  if (!collected) return collected.error();
  Collected& c = *collected;
  FinalizeStats stats;
  stats.events = c.events;
  stats.addresses = c.addresses.size();
  stats.modules = c.modules.modules().size();
  stats.damage = c.damage;
  const bool replace_symbols = options.symbolize && c.has_symbols;
  if (replace_symbols && !options.resymbolize) {
    stats.already_symbolized = true;
    return stats;
  }

  auto bytes = reader::Bytes::map_file(input);
  if (!bytes) return bytes.error();
  reader::CompactOptions compact{.zstd_level = options.zstd_level};
  if (options.tap) compact.on_event = [tap = options.tap](const format::Event& e) { tap->second(e); };
  auto compacted = reader::compact_trace((*bytes)->data(), compact);
  if (!compacted) return compacted.error();
  if (!stats.damage) stats.damage = compacted->damage;
  std::vector<uint8_t> out = without(compacted->bytes, replace_symbols);

  if (options.symbolize) {
    const auto start = std::chrono::steady_clock::now();
    Symbolizer symbolizer(options.symbolizer);
    reader::SymbolTable table;
    symbolize_all(symbolizer, c.modules, c.addresses, table);
    stats.symbolize_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
  if (options.tap && !stats.damage) {
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
