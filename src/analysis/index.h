// The analysis index: the Overview and the Aggregate of the default query,
// computed once when a trace is finalised and stored in the trace (chunk type
// 5, docs/FORMAT.md §10), so `summary` and `report` need not decode the events.
//
//   payload:  varint version | fingerprint | key | overview | aggregate
//
// The fingerprint ties the index to the chunks before it: the number of events
// chunks and a CRC-32C over every preceding chunk header's payload CRC (headers
// only, so checking it costs a hop per chunk). A re-compacted or edited file no
// longer matches, and the index is ignored; so is an index behind a chunk whose
// payload does not match its CRC (find_index checks every one). The key is the query it answers:
// the default QueryArgs with series_buckets = kIndexSeriesBuckets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "analysis/index_aggregate.h"
#include "analysis/model.h"
#include "format/expected.h"
#include "reader/cursor.h"

namespace memloupe::analysis {

// 2: the call totals carry their function count (functions are appended to
// format/funcs.h), the overview ends with the mapped memory and the aggregate
// with Aggregate::immediate. Indexes of version 1 are ignored with a warning
// (the events are read); finalising again writes a new one.
// 3: the counts stored together are preceded by their forms (empty, exact,
// full, sized), series bucket indexes are gaps, whole-number timelines and the
// frame pool are differences (index.cc's layout): the same information in 45%
// fewer compressed bytes on the suite's (b).
// 4: each stack's frames are the outermost ones it shares with the stack
// before it and its own (no frame pool), whole-number timelines are
// differences from a prediction: cc1plus's compressed index 47% smaller.
// Versions 2 and 3 are still read.
inline constexpr uint32_t kIndexVersion = 4;
// A trace of fewer events than this gets no index unless asked for one
// (IndexWhen): its events are read in a few tens of milliseconds (~40 ns each:
// `summary --no-index` on sqlite3's 3.4 M events, 0.14 s of CPU; python3's
// 17.6 k, as fast as from its index), and its index is about as large as its
// events (python3: 24.8 KB beside 26 KB), so it would only grow the file.
// The count is the Overview's (`memloupe info`'s and `summary`'s "events").
inline constexpr uint64_t kIndexMinEvents = 1'000'000;
enum class IndexWhen : uint8_t {
  Never,     // (for the CLI: --no-index)
  IfItPays,  // kIndexMinEvents events or more
  Always,    // (--index; tests that need one)
};
inline bool index_pays(uint64_t events) { return events >= kIndexMinEvents; }

// Time buckets of the per-stack series the index holds: the HTML report's, so
// `memloupe report` is answered from it (report::kHtmlBuckets refers to this).
inline constexpr uint32_t kIndexSeriesBuckets = 100;

struct IndexFingerprint {
  uint64_t event_chunks = 0;
  uint32_t crc = 0;
  bool operator==(const IndexFingerprint&) const = default;
};
// Over the chunks of `file` that start before `end` (an offset at a chunk
// boundary). Hops from header to header; payloads are not read.
IndexFingerprint index_fingerprint(std::span<const uint8_t> file, uint64_t end);

struct IndexKey {
  uint64_t temporary_ns = 0;
  uint32_t series_buckets = 0;
  bool operator==(const IndexKey&) const = default;
};

struct Index {
  IndexFingerprint fingerprint;
  IndexKey key;
  Overview overview;    // info, estimator and error are not stored (info comes from the header)
  Aggregate aggregate;  // query and estimator are not stored (set when it answers one)
};

// Any size: a payload over one chunk's limit (a trace with very many distinct
// stacks) is stored in consecutive index chunks (docs/FORMAT.md §10).
std::vector<uint8_t> encode_index(const Index& index);
// Every length, count and index is checked; the error names the offset.
// `info` is the trace's header (for the estimators).
Expected<Index> decode_index(reader::Cursor in, const format::TraceInfo& info);

// Builds the index from the finaliser's one read of the events: add() sees
// every event and builds the Overview and the Aggregate of the index's query as
// they come (index_aggregate.h); events_over() waits for the last of them and
// finishes what needed the events to be over (the series, the peak's live blocks).
class IndexBuilder {
 public:
  explicit IndexBuilder(const format::TraceInfo& info, IndexWhen when = IndexWhen::Always);
  ~IndexBuilder();
  // `key`: an Alloc's backtrace key from the reader (reader.h), if it has one.
  void add(const format::Event& event, const reader::BacktraceKey& key = {});
  // add() of an Alloc, of a Free, for a caller that has told them from the
  // other kinds already (FinalizeTap::alloc_event, free_event). Inline, straight
  // to the model: a call of their own was ~2 instructions of every event.
  void add(const format::Alloc& alloc, const reader::BacktraceKey& key) { model_->add(alloc, key); }
  void add(const format::Free& free) { model_->add(free); }
  // The rest of the events come at once (ThreadedOverview::use_worker).
  void rest_at_once();
  // Every event was added. finish() calls it if the caller did not.
  void events_over();
  // `trace`: the finished file the index will be appended to. Nothing when
  // the trace changed its sampling rate, or IfItPays and it has too few events.
  std::optional<std::vector<uint8_t>> finish(std::span<const uint8_t> trace);
  // After events_over(): the blocks still live at the end (AggregateBuilder::for_each_live).
  bool for_each_live(const AggregateBuilder::LiveBlockFn& fn) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ThreadedOverview* model_;  // impl_'s
};

// Where a file's index is and whether it is usable.
struct IndexLookup {
  enum class State : uint8_t { None, Fresh, Stale, Damaged };
  State state = State::None;
  uint64_t offset = 0;        // of the (first) index chunk
  std::optional<Index> index;  // when Fresh
  std::string problem;         // when Stale or Damaged: what is wrong, for one warning line
};
// Looks for the index (the run of index chunks that ends the file) and decodes it.
IndexLookup find_index(std::span<const uint8_t> file, const format::TraceInfo& info);

// The model from a fresh index, when it answers `args`: no time selection, no
// filter (--hide is fine: it only shapes the call tree), the index's
// --temporary, series_buckets 0 or the index's. Nothing otherwise.
std::optional<Model> model_from_index(Index index, const QueryArgs& args, const reader::SymbolTable& symbols);

}  // namespace memloupe::analysis
