// The analysis model: everything the views need, built from a trace in one or
// two streaming passes (see docs/ANALYSIS.md, "How the model is built").
//
//   pass 1  OverviewBuilder   filter-independent facts: info, threads, modules,
//                             exact call totals, the estimated heap over time
//                             (downsampled), its peak, RSS, markers.
//   pass 2  AggregateBuilder  the Query applied: per distinct backtrace (StackStats)
//                             and per thread, the Metrics of the selected
//                             allocations; lifetimes; optional time series.
//   then    CallTree          stacks expanded into frames (inlined frames included),
//                             grouped (by function by default), hidden frames
//                             dropped; root = outermost frame.
//
// Memory is proportional to distinct stacks, frames and live blocks, never to the
// number of events: live blocks sit in a hash table keyed by AllocId, the heap
// series has at most kMaxTimelinePoints buckets.
//
// Every Count is a sum over sampled blocks; turn it into bytes/objects with the
// Estimator (estimate.h), which also gives the 95% interval.
//
// Each part has its header: metrics.h, overview.h (pass 1), aggregate.h
// (pass 2), call_tree.h (the views' tree); this one puts them together.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>

#include "analysis/aggregate.h"
#include "analysis/call_tree.h"
#include "analysis/metrics.h"
#include "analysis/overview.h"
#include "analysis/query.h"
#include "format/events.h"
#include "format/expected.h"
#include "reader/reader.h"

namespace memloupe::analysis {

struct Model {
  Overview overview;
  Aggregate aggregate;
  reader::SymbolTable symbols;
  CallTree tree;
  bool from_index = false;  // answered by the trace's analysis index (index.h), not by streaming
  // Set when the trace has an index that could not be used (damaged, or built
  // for other events): what was wrong, naming the offset. The model was then
  // streamed as usual; the CLI prints this as a warning.
  std::optional<std::string> index_note;
};

// Called with the fraction done (0..1, over both passes) every few thousand events.
using Progress = std::function<void(double fraction)>;

// Reads the trace once when !needs_first_pass(args) (overview and aggregate side
// by side), else twice (pass 1, then pass 2 with the query resolved against pass
// 1). Errors: the file cannot be opened/is not a trace, or bad arguments. Damage in
// the middle of the trace is not an error: Overview::error says where reading stopped.
//
// A finalised trace carries an analysis index (index.h); with UseIndex::IfFresh
// a query it answers is taken from it without reading the events.
enum class UseIndex : uint8_t { IfFresh, Never };
Expected<Model> analyze_file(const std::string& path, const QueryArgs& args,
                             const Progress& progress = {}, UseIndex use_index = UseIndex::IfFresh);

// The same over events held in memory (tests, hand-built traces). Passes::Two
// forces the two-pass method even where one pass would do, so tests can check
// that both give the same model.
enum class Passes : uint8_t { Fewest, Two };
Expected<Model> analyze_events(const format::TraceInfo& info, const reader::SymbolTable& symbols,
                               std::span<const format::Event> events, const QueryArgs& args,
                               Passes passes = Passes::Fewest);

}  // namespace memloupe::analysis
