// The driver over a trace file (see model.h): one pass when the query allows
// it, else two. The reader maps the file, so opening it twice costs nothing.
#include <memory>

#include "analysis/index.h"
#include "analysis/model.h"
#include "reader/bytes.h"

namespace memloupe::analysis {
namespace {

// Reports progress every this many events (a cheap check on the hot loop).
constexpr uint64_t kProgressEvery = 1 << 16;

// Feeds every event to `builders` in order; `share` is this pass's part of the progress.
template <class... Builders>
void stream(reader::Reader& r, const Progress& progress, double base, double share, Builders&... builders) {
  const double size = static_cast<double>(r.file_size() ? r.file_size() : 1);
  uint64_t n = 0;
  while (const format::Event* e = r.next()) {
    (builders.add(*e), ...);
    if (progress && ++n % kProgressEvery == 0) progress(base + share * static_cast<double>(r.offset()) / size);
  }
}

// When the query needs nothing from a first pass: overview and aggregate together.
Expected<Model> one_pass(const std::string& path, const QueryArgs& args, const Progress& progress) {
  Expected<std::unique_ptr<reader::Reader>> r = reader::Reader::open(path);
  if (!r) return r.error();
  Model model;
  Expected<Query> query = resolve(args, model.overview);
  if (!query) return query.error();
  OverviewBuilder overview_builder((*r)->info());
  {
    // The aggregate passes each event on to the overview (see AggregateBuilder).
    AggregateBuilder aggregate_builder(overview_builder, (*r)->info(), (*r)->symbols(), *query);
    stream(**r, progress, 0.0, 1.0, aggregate_builder);
    model.aggregate = std::move(aggregate_builder).finish();
  }
  model.overview = std::move(overview_builder).finish((*r)->error());
  model.symbols = (*r)->symbols();
  model.tree = build_call_tree(model.aggregate, model.symbols, model.overview.modules);
  if (progress) progress(1.0);
  return model;
}

// The model from the trace's analysis index when it has a fresh one that
// answers `args`; else nothing, with `note` set if an index was there but unusable.
std::optional<Model> from_index(const std::string& path, const QueryArgs& args, std::optional<std::string>& note) {
  Expected<std::unique_ptr<reader::Reader>> r = reader::Reader::open(path);
  if (!r || !(*r)->info().source_format.empty()) return std::nullopt;
  Expected<std::unique_ptr<reader::Bytes>> bytes = reader::Bytes::map_file(path);
  if (!bytes) return std::nullopt;
  IndexLookup found = find_index((*bytes)->data(), (*r)->info());
  if (found.state == IndexLookup::State::Stale || found.state == IndexLookup::State::Damaged) {
    note = "ignored the analysis index (" + found.problem + "); read the events instead";
  }
  if (!found.index) return std::nullopt;
  return model_from_index(std::move(*found.index), args, (*r)->symbols());
}

Expected<Model> streamed(const std::string& path, const QueryArgs& args, const Progress& progress) {
  if (!needs_first_pass(args)) return one_pass(path, args, progress);

  Expected<std::unique_ptr<reader::Reader>> first = reader::Reader::open(path);
  if (!first) return first.error();
  OverviewBuilder overview_builder((*first)->info());
  stream(**first, progress, 0.0, 0.5, overview_builder);
  Model model;
  model.overview = std::move(overview_builder).finish((*first)->error());
  first->reset();

  Expected<Query> query = resolve(args, model.overview);
  if (!query) return query.error();

  Expected<std::unique_ptr<reader::Reader>> second = reader::Reader::open(path);
  if (!second) return second.error();
  {
    AggregateBuilder aggregate_builder(model.overview, (*second)->symbols(), *query);
    stream(**second, progress, 0.5, 0.5, aggregate_builder);
    model.aggregate = std::move(aggregate_builder).finish();
  }
  model.symbols = (*second)->symbols();
  model.tree = build_call_tree(model.aggregate, model.symbols, model.overview.modules);
  if (progress) progress(1.0);
  return model;
}

}  // namespace

Expected<Model> analyze_file(const std::string& path, const QueryArgs& args, const Progress& progress,
                             UseIndex use_index) {
  if (std::optional<Error> e = validate(args)) return *e;
  std::optional<std::string> note;
  if (use_index == UseIndex::IfFresh) {
    if (std::optional<Model> model = from_index(path, args, note)) return std::move(*model);
  }
  Expected<Model> model = streamed(path, args, progress);
  if (model) model->index_note = std::move(note);
  return model;
}

}  // namespace memloupe::analysis
