// libFuzzer target: any bytes through Reader::from_bytes, every event read and
// every field touched, plus the chunk scanner, the types table and the analysis
// index (decoded, and when it decodes, turned into a model with its call tree). None of them
// may crash, hang or allocate without bound, whatever the input.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/index.h"
#include "reader/chunk_io.h"
#include "reader/reader.h"
#include "reader/snapshot_decoder.h"
#include "types/type_table.h"

namespace {

using namespace memloupe;

// Reads every byte a consumer could look at, so the sanitizers see bad views.
uint64_t touch(const format::Event& ev) {
  uint64_t h = ev.index();
  auto bytes = [&](const auto& range) {
    for (auto b : range) h = h * 31 + static_cast<uint64_t>(b);
  };
  std::visit(
      [&](const auto& e) {
        using T = std::decay_t<decltype(e)>;
        if constexpr (std::is_same_v<T, format::Alloc>) {
          bytes(e.backtrace);
          h += e.size + e.address + e.alignment + e.n_samples + e.id.value + e.thread.value;
        } else if constexpr (std::is_same_v<T, format::ThreadName> ||
                             std::is_same_v<T, format::Marker>) {
          bytes(e.name);
        } else if constexpr (std::is_same_v<T, format::ModuleLoad>) {
          bytes(e.path);
          bytes(e.build_id);
        } else if constexpr (std::is_same_v<T, format::SymbolDef>) {
          for (const format::SymbolFrame& f : e.frames) {
            bytes(f.function);
            bytes(f.file);
            h += f.line + f.column;
          }
        } else if constexpr (std::is_same_v<T, format::CallTotals>) {
          for (const format::FuncTotal& t : e.totals) h += t.calls + t.bytes;
        }
      },
      ev);
  return h;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  volatile uint64_t sink = 0;
  const std::vector<uint8_t> bytes(data, data + size);
  const reader::ChunkList chunks = reader::scan_chunks(bytes);
  sink = sink + chunks.chunks.size();
  const reader::RawSnapshots snapshots = reader::decode_snapshots(bytes);
  sink = sink + snapshots.damage.size();
  for (const reader::RawSnapshot& s : snapshots.snapshots) {
    sink = sink + s.time_ns + s.label.size() + s.threads;
    for (const auto& r : s.roots) sink = sink + r.address + r.size + r.pc;
    for (const auto& b : s.blocks) sink = sink + b.address + b.extent + b.alloc_id;
    for (const auto& e : s.edges) sink = sink + e.from + e.to + e.offset;
    for (const auto& n : s.names) sink = sink + n.address + n.name.size() + n.line;
    for (const auto& st : s.stacks) sink = sink + st.size();
    for (const auto& site : s.sites) sink = sink + site.stack_plus_one + site.size;
    for (const auto& m : s.modules) sink = sink + m.start + m.path.size() + m.build_id.size();
    for (const auto& t : s.thread_names) sink = sink + t.id + t.name.size();
  }
  auto r = reader::Reader::from_bytes(bytes, "fuzz");
  if (!r) return 0;
  const format::TraceInfo& info = (*r)->info();
  sink = sink + info.host.size() + info.executable.size() + info.argv.size();
  for (const auto& [address, frames] : (*r)->symbols())
    for (const reader::OwnedFrame& f : frames) sink = sink + address + f.function.size() + f.line;
  while (const format::Event* e = (*r)->next()) sink = sink + touch(*e);
  if ((*r)->error()) sink = sink + (*r)->error()->message.size();
  const types::LoadedTypes types = types::load_types(bytes);
  for (const auto& [address, t] : types.table) sink = sink + address + t.name.size() + t.objects_in(t.type_size);
  if (types.problem) sink = sink + types.problem->message.size();

  // Checksums are off in this build, so a stale fingerprint is the only thing
  // between a mutated index and the model: use the index whatever it says.
  analysis::IndexLookup found = analysis::find_index(bytes, info);
  sink = sink + found.problem.size();
  std::optional<analysis::Index> index = std::move(found.index);
  if (!index && found.state == analysis::IndexLookup::State::Stale) {
    auto chunk = reader::read_chunk(bytes, found.offset);
    std::vector<uint8_t> buffer;
    auto payload = chunk ? reader::chunk_payload(*chunk, buffer) : Expected<std::span<const uint8_t>>(Error{"", 0});
    if (payload) {
      const bool packed = chunk->flags & format::kChunkZstd;
      auto decoded = analysis::decode_index(
          reader::Cursor(*payload, packed ? found.offset : found.offset + format::kChunkHeaderSize, packed), info);
      if (decoded) index = std::move(*decoded);
    }
  }
  if (index) {
    analysis::QueryArgs args;
    args.series_buckets = index->key.series_buckets;
    if (auto model = analysis::model_from_index(std::move(*index), args, (*r)->symbols()))
      sink = sink + model->tree.node_count() + model->aggregate.stacks.size();
  }
  return 0;
}
