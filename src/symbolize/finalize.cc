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
#include "reader/native_reader.h"
#include "reader/reader.h"
#include "symbolize/atomic_file.h"
#include "symbolize/snapshot_roots.h"

namespace memloupe::symbolize {
namespace {

// What symbolisation needs from the events: the module map over time and
// each distinct backtrace address with the module it was first seen in.
struct Collected {
  ModuleMap modules;
  std::vector<AddressInModule> addresses;
  uint64_t events = 0;
  std::optional<Error> damage;
};

// Pass 1 over the events (tap->first rides on it), from whichever read.
class Collector {
 public:
  Collector(FinalizeTap* tap, FinalizeAddon* addon, SnapshotRoots& snapshots)
      : tap_(tap), addon_(addon), snapshots_(snapshots) {}

  // `fresh`: Reader::fresh_frames() for an Alloc.
  void add(const format::Event& e, uint32_t fresh) {
    if (std::holds_alternative<format::SymbolDef>(e)) return;  // replaced or kept as a whole
    ++c_.events;
    if (tap_) tap_->first(e);
    snapshots_.add(e);
    if (const auto* alloc = std::get_if<format::Alloc>(&e)) {
      if (addon_) addon_->alloc(*alloc);
      // The other frames were seen with an earlier Alloc.
      for (uint64_t address : alloc->backtrace.first(std::min<size_t>(fresh, alloc->backtrace.size()))) {
        if (!seen_.insert(address).second) continue;
        if (auto m = c_.modules.find(address)) {
          c_.addresses.push_back({address, *m});
        } else {
          unmapped_.push_back(address);
        }
      }
    } else if (const auto* load = std::get_if<format::ModuleLoad>(&e)) {
      c_.modules.load(*load);
    } else if (const auto* unload = std::get_if<format::ModuleUnload>(&e)) {
      c_.modules.unload(unload->start);
    }
  }

  Collected finish(std::optional<Error> damage) && {
    for (uint64_t address : unmapped_) {
      if (auto m = c_.modules.find_any_time(address)) c_.addresses.push_back({address, *m});
    }
    c_.damage = std::move(damage);
    return std::move(c_);
  }

 private:
  FinalizeTap* tap_;
  FinalizeAddon* addon_;
  SnapshotRoots& snapshots_;
  Collected c_;
  std::unordered_set<uint64_t> seen_;
  std::vector<uint64_t> unmapped_;  // seen while no module covered them
};

Expected<std::unique_ptr<reader::Reader>> open_native(const std::string& input) {
  auto opened = reader::Reader::open(input);
  if (!opened) return opened.error();
  const std::string& source = (*opened)->info().source_format;
  if (!source.empty()) return Error{input + " is a " + source + " trace; only memloupe traces are finalised"};
  return opened;
}

Collected collect(reader::Reader& r, FinalizeTap* tap, FinalizeAddon* addon, SnapshotRoots& snapshots) {
  Collector collector(tap, addon, snapshots);
  while (const format::Event* e = r.next()) collector.add(*e, r.fresh_frames());
  return std::move(collector).finish(r.error());
}

// The compaction's mapping of the input, lent to pass 2's reader (a mapping
// of its own would count twice in the resident size).
class LentBytes final : public reader::Bytes {
 public:
  explicit LentBytes(const reader::Bytes& owner) : Bytes(owner.name()), data_(owner.data()) {}
  std::span<const uint8_t> data() const override { return data_; }

 private:
  std::span<const uint8_t> data_;
};

// Pass 2 for the tap: the events again, as the compaction keeps them (the two
// agree when neither stopped at damage, the only case the index is written in).
std::optional<Error> second_pass(const reader::Bytes& input, FinalizeTap& tap) {
  auto opened = reader::open_native(std::make_unique<LentBytes>(input));
  if (!opened) return opened.error();
  reader::Reader& r = **opened;
  while (const format::Event* e = r.next()) {
    if (!std::holds_alternative<format::SymbolDef>(*e)) tap.second(*e);
  }
  return r.error();
}

// Whether the compaction's read of `file` delivers exactly the events, and
// stops at exactly the damage, that a Reader's does: when every chunk is
// intact and holds events (a recorder's raw trace, not cut short). Both then
// run the same decoder over the same chunks. Elsewhere they differ in what
// they skip and how they word an early end, so pass 1 reads for itself.
bool one_read_will_do(std::span<const uint8_t> file) {
  const reader::ChunkList list = reader::scan_chunks(file);
  if (list.error || list.chunks.empty()) return false;
  return std::all_of(list.chunks.begin() + 1, list.chunks.end(), [](const reader::ChunkView& c) {
    return c.type == static_cast<uint8_t>(format::ChunkType::Events) ||
           c.type == static_cast<uint8_t>(format::ChunkType::EventsColumns);
  });
}

bool is(const reader::ChunkView& chunk, format::ChunkType type) {
  return chunk.type == static_cast<uint8_t>(type);
}

// The trace without its index chunks and, if `symbols`, its symbols chunks and
// what was derived with them (the others are copied as stored).
std::vector<uint8_t> without(std::span<const uint8_t> trace, bool symbols) {
  const reader::ChunkList list = reader::scan_chunks(trace);
  std::vector<uint8_t> out(trace.begin(), trace.begin() + format::kPrologueSize);
  for (const reader::ChunkView& chunk : list.chunks) {
    if (is(chunk, format::ChunkType::AnalysisIndex)) continue;
    if (symbols && (is(chunk, format::ChunkType::Symbols) || is(chunk, format::ChunkType::Types))) continue;
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

  // Pass 1 (collect, and the tap's first) and the compaction are one read of
  // the events when that changes nothing (one_read_will_do), else two reads on
  // two threads. The compaction compresses on a thread of its own. Once pass 1
  // is over, the symbolisation (which needs only its addresses) runs beside
  // the tap's pass 2 (which needs it finished). Each job's failure surfaces
  // here, through its future.
  if (options.tap) options.tap->begin(r.info());
  const bool one_read = one_read_will_do((*bytes)->data());
  std::optional<Collector> riding;
  FinalizeAddon* addon = options.symbolize ? options.addon : nullptr;
  // Heap snapshots: their frames' pcs are symbolised with the return
  // addresses, and each gets its annex (symbolize/snapshot_roots.h).
  SnapshotRoots snapshots(options.symbolize ? (*bytes)->data() : std::span<const uint8_t>());
  if (one_read) riding.emplace(options.tap, addon, snapshots);
  // The compaction's damage once its decoding is over: set by its thread, once.
  std::promise<std::optional<Error>> decoded;
  bool decoded_set = false;  // touched by that thread only
  auto decoding_over = [&](std::optional<Error> damage, std::exception_ptr failure = nullptr) {
    if (decoded_set) return;
    decoded_set = true;
    if (failure) {
      decoded.set_exception(failure);
    } else {
      decoded.set_value(std::move(damage));
    }
  };
  std::future<Expected<reader::Compacted>> compaction = std::async(std::launch::async, [&] {
    reader::CompactOptions compact{.zstd_level = options.zstd_level};
    if (one_read) {
      compact.on_event = [&](const format::Event& e, uint32_t fresh) { riding->add(e, fresh); };
      compact.on_events_done = [&](const std::optional<Error>& damage) { decoding_over(damage); };
    }
    try {
      auto result = reader::compact_trace((*bytes)->data(), compact);
      decoding_over(result ? result->damage : result.error());
      return result;
    } catch (...) {
      decoding_over(std::nullopt, std::current_exception());
      throw;
    }
  });
  Collected c;
  if (one_read) {
    // The wait orders the compaction thread's work on `riding` before ours.
    c = std::move(*riding).finish(decoded.get_future().get());
  } else {
    c = collect(r, options.tap, addon, snapshots);
  }
  opened->reset();  // unmaps: three live mappings of the input would count thrice in RSS
  stats.events = c.events;
  stats.addresses = c.addresses.size();
  stats.modules = c.modules.modules().size();
  stats.damage = c.damage;

  if (!snapshots.frame_pcs().empty()) {
    std::unordered_set<uint64_t> known;
    for (const AddressInModule& a : c.addresses) known.insert(a.address);
    for (uint64_t pc : snapshots.frame_pcs())
      if (auto m = c.modules.find_any_time(pc); m && known.insert(pc).second) c.addresses.push_back({pc, *m});
  }

  std::future<reader::SymbolTable> symbols;
  std::vector<std::pair<format::ChunkType, std::vector<uint8_t>>> addon_chunks;  // set with `symbols`
  if (options.symbolize) {
    symbols = std::async(std::launch::async, [&] {
      const auto start = std::chrono::steady_clock::now();
      Symbolizer symbolizer(options.symbolizer);
      reader::SymbolTable table;
      symbolize_all(symbolizer, c.modules, c.addresses, table);
      const auto symbolized = std::chrono::steady_clock::now();
      stats.symbolize_seconds = std::chrono::duration<double>(symbolized - start).count();
      if (addon) {
        addon_chunks = addon->chunks(symbolizer, c.modules, c.addresses);
        stats.addon_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - symbolized).count();
      }
      return table;
    });
  }
  // After damage no index is written, so pass 2 is not needed then.
  const bool want_index = options.tap && !stats.damage;
  if (want_index) {
    if (auto e = second_pass(**bytes, *options.tap)) stats.damage = *e;
  }

  auto compacted = compaction.get();
  if (!compacted) return compacted.error();
  if (!stats.damage) stats.damage = compacted->damage;
  // (The one read is only taken when the input holds nothing but events.)
  std::vector<uint8_t> out = one_read ? std::move(compacted->bytes) : without(compacted->bytes, replace_symbols);

  for (const std::vector<uint8_t>& payload : snapshots.annex_chunks(c.modules, options.symbolizer))
    reader::append_chunk_compressed(out, format::ChunkType::Snapshot, payload, options.zstd_level);

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
    const size_t before_addon = out.size();
    for (const auto& [type, payload] : addon_chunks) {
      reader::append_chunk_compressed(out, type, payload, options.zstd_level);
    }
    stats.addon_bytes = out.size() - before_addon;
  }

  // An index summarises exactly the events of the file; after damage the two
  // reads may have stopped in different places, so none is written then.
  if (want_index && !stats.damage) {
    if (std::optional<std::vector<uint8_t>> index = options.tap->index(out)) {
      const size_t before = out.size();
      // An index over a chunk's limit continues in the next index chunk; the
      // run of them that ends the file is the index (docs/FORMAT.md §10).
      const std::span<const uint8_t> whole(*index);
      for (size_t at = 0; at < whole.size() || at == 0; at += format::kMaxChunkRaw) {
        const auto part = whole.subspan(at, std::min<size_t>(format::kMaxChunkRaw, whole.size() - at));
        reader::append_chunk_compressed(out, format::ChunkType::AnalysisIndex, part, options.zstd_level);
      }
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
