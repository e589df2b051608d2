// The driver over a trace file (see model.h): one pass when the query allows
// it, else two. The reader maps the file, so opening it twice costs nothing.
#include <memory>

#include "analysis/model.h"

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

}  // namespace

Expected<Model> analyze_file(const std::string& path, const QueryArgs& args, const Progress& progress) {
  if (std::optional<Error> e = validate(args)) return *e;
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

}  // namespace memloupe::analysis
