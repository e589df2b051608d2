#include "finalize/finalize.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <unordered_set>

#include "finalize/atomic_file.h"
#include "finalize/compact.h"
#include "finalize/event_collector.h"
#include "finalize/follow.h"
#include "finalize/index_chunks.h"
#include "finalize/kept_until_exit.h"
#include "format/symbols_encoder.h"
#include "format/wire.h"
#include "reader/bytes.h"
#include "reader/chunk_io.h"
#include "reader/native_reader.h"
#include "reader/reader.h"
#include "symbolize/snapshot_roots.h"

namespace memloupe::finalize {
namespace {

Expected<std::unique_ptr<reader::Reader>> open_native(const std::string& input) {
  auto opened = reader::Reader::open(input);
  if (!opened) return opened.error();
  const std::string& source = (*opened)->info().source_format;
  if (!source.empty()) return Error{input + " is a " + source + " trace; only memloupe traces are finalised"};
  return opened;
}

Collected collect(reader::Reader& r, Collector collector) {
  while (const format::Event* e = r.next()) collector.add_read(*e, r);
  return std::move(collector).finish(r.error());
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

// Whether the events must be rewritten into their final form (merged column
// chunks, zstd) before they are kept. The recorder writes that form itself
// (compressed column chunks, recorder/chunk_compressor.h), so a trace whose
// every events chunk is compressed column form is kept as stored, and its
// events are read once, for the collector and the tap, by the follower or a
// Reader. Decided per file: a single events chunk in row form or stored raw (a
// trace from an earlier recorder, or a chunk this one could not compress) and
// the whole file is compacted as before, since the compaction's decoder state
// runs through every chunk. Only headers are read here.
bool needs_compaction(std::span<const uint8_t> file) {
  bool raw_events = false;
  reader::walk_chunks(file, format::kPrologueSize, file.size(), reader::BrokenHeader::Stop,
                      [&](const reader::ChunkHop& hop) {
                        const bool compressed = hop.header.flags & format::kChunkZstd;
                        raw_events = hop.is(format::ChunkType::Events) ||
                                     (hop.is(format::ChunkType::EventsColumns) && !compressed);
                        return !raw_events;
                      });
  return raw_events;
}

// The compaction stage: rewrites the events in their final form on a thread of
// its own (it compresses on more). When given a Collector (one_read_will_do),
// the collection rides on its read of the events.
class Compaction {
 public:
  Compaction(std::span<const uint8_t> file, int zstd_level, Collector* riding) {
    job_ = std::async(std::launch::async, [this, file, zstd_level, riding] {
      CompactOptions compact{.zstd_level = zstd_level};
      if (riding) {
        compact.on_event = [riding](const format::Event& e, uint32_t fresh) { riding->add(e, fresh); };
        compact.on_events_done = [this](const std::optional<Error>& damage) { decoding_over(damage); };
      }
      try {
        auto result = compact_trace(file, compact);
        decoding_over(result ? result->damage : result.error());
        return result;
      } catch (...) {
        decoding_over(std::nullopt, std::current_exception());
        throw;
      }
    });
  }
  // Joins the thread (std::future's destructor), also when the caller returns early.
  ~Compaction() {
    if (job_.valid()) job_.wait();
  }
  Compaction(const Compaction&) = delete;
  Compaction& operator=(const Compaction&) = delete;

  // Once the read is over: the damage it stopped at. The wait orders the
  // compaction thread's work on the riding Collector before the caller's.
  std::optional<Error> decoded() { return decoded_.get_future().get(); }
  Expected<Compacted> result() { return job_.get(); }

 private:
  // Set by the compaction's thread, once.
  void decoding_over(std::optional<Error> damage, std::exception_ptr failure = nullptr) {
    if (decoded_set_) return;
    decoded_set_ = true;
    if (failure) {
      decoded_.set_exception(failure);
    } else {
      decoded_.set_value(std::move(damage));
    }
  }

  std::promise<std::optional<Error>> decoded_;
  bool decoded_set_ = false;  // touched by the compaction's thread only
  std::future<Expected<Compacted>> job_;  // last: started once the rest exists
};

bool is(const reader::ChunkView& chunk, format::ChunkType type) {
  return chunk.type == static_cast<uint8_t>(type);
}

// What without() keeps of a trace: while every byte kept is the trace's own,
// in order from its start, only how many (no copy); bytes() then copies them.
class Kept {
 public:
  explicit Kept(std::span<const uint8_t> trace) : trace_(trace) {}
  // The trace's bytes [offset, offset + size), as stored.
  void keep(uint64_t offset, uint64_t size) {
    if (rewritten_.empty() && offset == prefix_) {
      prefix_ += size;
      return;
    }
    const auto begin = trace_.begin() + static_cast<ptrdiff_t>(offset);
    bytes().insert(bytes().end(), begin, begin + static_cast<ptrdiff_t>(size));
  }
  // Whether what is kept is the whole trace as stored: the output can then be
  // the input file with the rest appended (AppendedFile).
  bool whole() const { return rewritten_.empty() && prefix_ == trace_.size(); }
  std::vector<uint8_t>& bytes() {
    if (prefix_ > 0) {
      rewritten_.assign(trace_.begin(), trace_.begin() + static_cast<ptrdiff_t>(prefix_));
      prefix_ = 0;
    }
    return rewritten_;
  }

 private:
  std::span<const uint8_t> trace_;
  uint64_t prefix_ = 0;
  std::vector<uint8_t> rewritten_;
};

// The trace without its index chunks and, if `symbols`, its symbols chunks and
// what was derived with them, and without what follows the chunk holding
// `damage` (the chunk itself is kept: the output then reads as the input did,
// up to the same damage). Compressed chunks are kept as stored; others are
// compressed at `level` when that is smaller (level <= 0: kept), but for the
// Header chunk, which the recorder stores uncompressed and which is kept so:
// compressed it saves some 30 bytes, kept it lets the finalise of a trace the
// recorder wrote append to the trace rather than rewrite it (Kept::whole).
Kept without(std::span<const uint8_t> trace, bool symbols, const std::optional<Error>& damage = std::nullopt,
             int level = 0) {
  const reader::ChunkList list = reader::scan_chunks(trace);
  Kept out(trace);
  out.keep(0, format::kPrologueSize);
  for (const reader::ChunkView& chunk : list.chunks) {
    if (damage && chunk.offset > damage->offset) break;
    if (is(chunk, format::ChunkType::AnalysisIndex)) continue;
    if (symbols && (is(chunk, format::ChunkType::Symbols) || is(chunk, format::ChunkType::Types))) continue;
    if (level > 0 && !(chunk.flags & format::kChunkZstd) && !is(chunk, format::ChunkType::Header)) {
      reader::append_chunk_compressed(out.bytes(), static_cast<format::ChunkType>(chunk.type), chunk.stored, level);
      continue;
    }
    out.keep(chunk.offset, format::kChunkHeaderSize + chunk.stored.size());
  }
  return out;
}

// The snapshots' annex and the analysis index are compressed at level 3 at
// most: both are made serially after a followed program's exit. The annex's
// stacks (varint addresses) took level 6 ~1.8x as long as level 5 for 1.3%
// fewer bytes (cc1plus's 3.2 MB annex: 296 -> 300 KB), and level 5 ~11 ms
// more than level 3 for ~50 KB fewer (1.8% of cc1plus's finalised file, which
// the smaller index of the same round had made 470 KB smaller; docs/RECORDER.md,
// "cc1plus after the exit, 2026-11-26 (fifth round)" and "The 2026-11-26 fifth
// round together"). The index (since the seventh round): (b)'s 364 KB took
// 4.3 ms at level 6 and 2.0 ms at level 3, for 187.2 -> 192.0 KB (+0.15% of
// its file); sqlite3's +0.9 KB (+0.4%), (a)'s and (d)'s +0.2 KB
// (docs/RECORDER.md, "After the exit, second pass, 2026-11-26 (seventh round)").
int after_exit_level(int level) { return std::min(level, 3); }

// Whether `input` and `output` name one file (the usual finalise: in place).
bool same_file(const std::string& input, const std::string& output) {
  std::error_code ec;
  return input == output || std::filesystem::equivalent(input, output, ec);
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
                                       const FinalizeOptions& options, FollowedRead* followed) {
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

  // The events are read once: by a follower while they were written, or by
  // the compaction when that changes nothing (one_read_will_do), else by a
  // Reader here while the compaction (if any) runs on its own thread. Once the
  // read is over, the symbolisation (which needs only its addresses) runs
  // beside the tap's events_over(). Each job's failure surfaces here, through
  // its future.
  if (options.tap && !followed) {
    options.tap->begin(r.info());
    options.tap->rest_at_once();  // (a compaction's thread that reads them starts after this)
  }
  FinalizeAddon* addon = options.symbolize ? options.addon : nullptr;
  const std::span<const uint8_t> input_bytes = (*bytes)->data();
  const bool compact = needs_compaction(input_bytes);
  const bool one_read = compact && !followed && one_read_will_do(input_bytes);
  // Heap snapshots: their frames' pcs are symbolised with the return
  // addresses, and each gets its annex (symbolize/snapshot_roots.h).
  symbolize::SnapshotRoots snapshots(options.symbolize ? input_bytes : std::span<const uint8_t>());
  Collector collector(options.tap, addon, &snapshots);
  std::optional<Compaction> compaction;
  if (compact) compaction.emplace(input_bytes, options.zstd_level, one_read ? &collector : nullptr);
  Collected c = followed    ? std::move(followed->collected)
                : one_read ? std::move(collector).finish(compaction->decoded())
                           : collect(r, std::move(collector));
  // A follower read the events before the snapshots (written at their end,
  // at exit) named the blocks to look for: their sizes and stacks come from
  // the tap's blocks still live at the end (below, after events_over()), or
  // from one more read of the events.
  const bool sites_later = followed && !snapshots.empty();
  if (sites_later) {
    for (const format::ThreadStart& t : c.thread_starts) snapshots.add(t);
    for (const auto& [thread, name] : c.thread_names) snapshots.add(format::ThreadName{thread, 0, name});
  }
  opened->reset();  // unmaps: three live mappings of the input would count thrice in RSS
  stats.events = c.events;
  stats.addresses = c.addresses.size();
  stats.modules = c.modules.modules().size();
  stats.damage = c.damage;

  if (!snapshots.frame_pcs().empty()) {
    std::unordered_set<uint64_t> known;
    for (const symbolize::AddressInModule& a : c.addresses) known.insert(a.address);
    for (uint64_t pc : snapshots.frame_pcs())
      if (auto m = c.modules.find_any_time(pc); m && known.insert(pc).second) c.addresses.push_back({pc, *m});
  }

  // Symbolisers a follower prepared while the program ran (symbol_preparer.h).
  SymbolPreparer* prepared = followed ? followed->symbols.get() : nullptr;
  std::future<reader::SymbolTable> symbols;
  std::vector<std::pair<format::ChunkType, std::vector<uint8_t>>> addon_chunks;  // set with `symbols`
  if (options.symbolize) {
    symbols = std::async(std::launch::async, [&] {
      const auto start = std::chrono::steady_clock::now();
      std::optional<symbolize::Symbolizer> own;
      symbolize::Symbolizer& symbolizer =
          prepared ? prepared->done().frames() : own.emplace(options.symbolizer);
      // The addresses the follower's preparer symbolised as it read (the
      // first ones of c.addresses): told of as symbolize_all would, the rest
      // symbolised now.
      reader::SymbolTable table;
      std::span<const symbolize::AddressInModule> rest(c.addresses);
      if (prepared) {
        table = prepared->take_symbols();
        symbolizer.tell(c.modules, rest.first(prepared->symbolized()));
        rest = rest.subspan(prepared->symbolized());
      }
      symbolize::symbolize_all(symbolizer, c.modules, rest, table);
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
  // After damage no index is written, so the tap's work after the read is not needed then.
  const bool want_index = options.tap && !stats.damage;
  // The tap's end of the events (the index's worker finishing, its tables'
  // last sums) on a thread of its own, while this one keeps the input's bytes
  // and names the snapshots' global roots, which need neither (on (b) ~5 and
  // ~1.5 ms after the program's exit, docs/RECORDER.md "After the exit,
  // 2026-11-26 (seventh round)"). Joined before the sites, which need it, or
  // by the future's destructor on an early return.
  std::future<void> events_over;
  if (want_index) events_over = std::async(std::launch::async, [tap = options.tap] { tap->events_over(); });
  // The events as the output keeps them: compacted, or the input's as stored.
  // `out` is the output, or with `appended` what follows the input's bytes,
  // which then stay where they are: the input is the output and its every
  // byte is kept (a followed `memloupe run`'s trace, as the recorder wrote it).
  std::vector<uint8_t> out;
  std::optional<AppendedFile> appended;
  if (compaction) {
    auto compacted = compaction->result();
    if (!compacted) return compacted.error();
    if (!stats.damage) stats.damage = compacted->damage;
    // (The one read is only taken when the input holds nothing but events.)
    out = one_read ? std::move(compacted->bytes) : std::move(without(compacted->bytes, replace_symbols).bytes());
  } else {
    Kept kept = without(input_bytes, replace_symbols, stats.damage, options.zstd_level);
    if (kept.whole() && same_file(input, output)) {
      if (auto file = AppendedFile::open(output, input_bytes.size())) appended.emplace(std::move(*file));
    }
    if (!appended) out = std::move(kept.bytes());  // (the file cannot be appended to: a copy, as any other output)
  }

  if (prepared && !snapshots.empty()) snapshots.name_globals(c.modules, prepared->done().namer());
  if (events_over.valid()) events_over.get();
  if (sites_later) {
    // An at-exit snapshot's blocks are those live at the end; a block freed
    // after an earlier snapshot is not, and is looked for in the events.
    const bool from_tap = want_index && options.tap->live_blocks(
        [&](uint64_t id, uint64_t size, uint32_t stack, std::span<const uint64_t> frames) {
          snapshots.add_table_block(id, size, stack, frames);
        });
    if (!from_tap || !snapshots.sites_complete()) {
      auto again = open_native(input);
      if (!again) return again.error();
      while (const format::Event* e = (*again)->next()) snapshots.add(*e);
    }
  }

  for (const std::vector<uint8_t>& payload :
       prepared && !snapshots.empty() ? snapshots.annex_chunks(c.modules, prepared->done().namer())
                                      : snapshots.annex_chunks(c.modules, options.symbolizer))
    reader::append_chunk_compressed(out, format::ChunkType::Snapshot, payload, after_exit_level(options.zstd_level));

  reader::SymbolTable table;
  if (options.symbolize) {
    table = symbols.get();
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
    // It is built over the whole output: an appended file's, mapped once what
    // precedes the index is in it.
    std::unique_ptr<reader::Bytes> appended_view;
    if (appended) {
      if (auto e = appended->append(out)) return *e;
      out.clear();
      auto view = reader::Bytes::map_file(output);
      if (!view) return view.error();
      appended_view = std::move(*view);
    }
    if (std::optional<std::vector<uint8_t>> index =
            options.tap->index(appended_view ? appended_view->data() : std::span<const uint8_t>(out))) {
      const size_t before = out.size();
      append_index_chunks(out, *index, after_exit_level(options.zstd_level));
      stats.index_bytes = out.size() - before;
    }
  }

  if (appended) {
    if (auto e = appended->append(out)) return *e;
    if (auto e = appended->commit()) return *e;
    stats.output_bytes = appended->size();
  } else {
    auto file = AtomicFile::create(output);
    if (!file) return file.error();
    if (auto e = file->write(out)) return *e;
    if (auto e = file->commit()) return *e;
    stats.output_bytes = out.size();
  }
  if (options.keep_until_exit) {
    keep_until_exit(std::move(out));
    keep_until_exit(std::move(c));
    keep_until_exit(std::move(table));
    keep_until_exit(std::move(snapshots));
  }
  return stats;
}

}  // namespace memloupe::finalize
